import { action, NO_FLAGS } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'

export function registerTrust(program: CliCommand, ctx: Context): void {
  program
    .command('trust')
    .description(
      "allow this project's .harness/config.json as it is now (setup commands, providers, worktree root)",
    )
    .addHelpText(
      'after',
      '\nExample:\n  cat .harness/config.json && harness trust\n\nA changed file is untrusted again; your own config (~/.config/harness/config.json) needs no trust.\nWithout a project config there is nothing to trust: exit 0, and one line says so.',
    )
    .action(
      action(NO_FLAGS, async () => {
        const paths = await ctx.project()
        const { trustProject } = (await ctx.services.setup()).trust
        const result = trustProject(paths.root, paths.configFile, ctx.env)
        ctx.out.result(result, (r) =>
          r.exists === false
            ? `nothing to trust yet: ${r.config_file} does not exist`
            : [`trusted ${r.config_file} (sha256 ${r.sha256})`, ...r.keys.map((k) => `  ${k}`)].join('\n'),
        )
      }),
    )
  program
    .command('untrust')
    .description("stop allowing this project's .harness/config.json")
    .addHelpText('after', '\nExample:\n  harness untrust')
    .action(
      action(NO_FLAGS, async () => {
        const paths = await ctx.project()
        const { untrustProject } = (await ctx.services.setup()).trust
        const result = untrustProject(paths.root, paths.configFile, ctx.env)
        ctx.out.result(result, (r) => `${r.config_file} is not trusted`)
      }),
    )
}
