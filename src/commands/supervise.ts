import { action } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { textFlag } from '../cli/options.js'

/**
 * Hidden: the detached supervisor of a background run. Its plan arrives on stdin from `harness run --detach`,
 * or, for a run hosted in tmux, in the file `--tmux-plan` names.
 */
const SUPERVISE_FLAGS = {
  tmuxPlan: textFlag('--tmux-plan <file>', 'internal: the plan of a run hosted in tmux'),
}

export function registerSupervise(program: CliCommand, ctx: Context): void {
  program
    .command('__supervise', { hidden: true })
    .description('internal: supervise a background run')
    .flags(SUPERVISE_FLAGS)
    .action(
      action(SUPERVISE_FLAGS, async (options) => {
        if (options.tmuxPlan) {
          const { superviseInTmux } = await ctx.services.tmuxRun()
          await superviseInTmux(options.tmuxPlan, {
            TMUX: ctx.env.TMUX,
            TMUX_PANE: ctx.env.TMUX_PANE,
          })
          return
        }
        const plan = await ctx.readStdin()
        const { superviseDetached } = await ctx.services.runner()
        await superviseDetached(plan)
      }),
    )
}
