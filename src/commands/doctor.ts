import { action } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { boolFlag } from '../cli/options.js'
import { ExitRequest } from '../errors.js'

const DOCTOR_FLAGS = {
  submitTest: boolFlag(
    '--submit-test',
    'also run a real test job on the Slurm cluster (spool, scratch and the agent on a node)',
  ),
}

export function registerDoctor(program: CliCommand, ctx: Context): void {
  program
    .command('doctor')
    .description(
      'check that harness can work here: git, .harness, config trust, agents, tmux, backends, sessions',
    )
    .flags(DOCTOR_FLAGS)
    .addHelpText(
      'after',
      `
Exit status 0 only when harness is usable here (no "fail" line), else 1.

Examples:
  harness doctor
  harness doctor --submit-test              # a real job on the Slurm cluster too
  harness doctor --json | jq '.checks[] | select(.status != "ok")'`,
    )
    .action(
      action(DOCTOR_FLAGS, async (options) => {
        const { runDoctor } = (await ctx.services.setup()).harnessDoctor
        const { renderDoctor } = (await ctx.services.setup()).renderDoctor
        const report = await runDoctor(ctx, { submitTest: options.submitTest === true })
        ctx.out.result(report, (r) => renderDoctor(r, ctx.out.color, ctx.out.width))
        if (!report.usable) throw new ExitRequest(1)
      }),
    )
}
