import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'

export function registerPath(session: CliCommand, ctx: Context): void {
  session
    .command('path <id>')
    .description('print the absolute worktree path of a session; nothing on stdout on error')
    .addHelpText(
      'after',
      `
On an error it prints nothing on stdout, and cd "" succeeds in bash and zsh:
check its status before cd, or use hcd (harness shell-init --help).

Examples:
  p=$(harness session path 3f9a) && cd "$p"
  hcd 3f9a                                  # after: eval "$(harness shell-init bash)"`,
    )
    .action(
      action(NO_FLAGS, async (_options, id: string) =>
        (await ctx.services.reading()).read.printSessionPath(ctx, id),
      ),
    )
}
