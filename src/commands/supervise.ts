import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../cli/action.js'
import type { Context } from '../cli/context.js'

/**
 * Hidden: the detached supervisor of a background run. Its plan arrives on stdin from `harness run --detach`,
 * or, for a run hosted in tmux, in the file `--tmux-plan` names.
 */
export function registerSupervise(program: Command, ctx: Context): void {
  program
    .command('__supervise', { hidden: true })
    .description('internal: supervise a background run')
    .option('--tmux-plan <file>', 'internal: the plan of a run hosted in tmux')
    .action(
      action(z.object({ tmuxPlan: z.optional(z.string()) }), async (options) => {
        if (options.tmuxPlan) {
          const { superviseInTmux } = await import('../sessions/run/tmux-run.js')
          await superviseInTmux(options.tmuxPlan, {
            TMUX: ctx.env.TMUX,
            TMUX_PANE: ctx.env.TMUX_PANE,
          })
          return
        }
        const plan = await ctx.readStdin()
        const { superviseDetached } = await import('../sessions/run/runner.js')
        await superviseDetached(plan)
      }),
    )
}
