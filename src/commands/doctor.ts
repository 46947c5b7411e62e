import { action, NO_FLAGS } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { ExitRequest } from '../errors.js'

export function registerDoctor(program: CliCommand, ctx: Context): void {
  program
    .command('doctor')
    .description('check that harness can work here: git, .harness, config trust, agents, tmux, sessions')
    .addHelpText(
      'after',
      `
Exit status 0 only when harness is usable here (no "fail" line), else 1.

Examples:
  harness doctor
  harness doctor --json | jq '.checks[] | select(.status != "ok")'`,
    )
    .action(
      action(NO_FLAGS, async () => {
        const { runDoctor } = await ctx.services.harnessDoctor()
        const { renderDoctor } = await ctx.services.renderDoctor()
        const report = await runDoctor(ctx)
        ctx.out.result(report, (r) => renderDoctor(r, ctx.out.color, ctx.out.width))
        if (!report.usable) throw new ExitRequest(1)
      }),
    )
}
