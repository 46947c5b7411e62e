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
    .action(action(SUPERVISE_FLAGS, (options) => superviseRun(ctx, options.tmuxPlan)))
}

/**
 * The supervisor's whole life. The plain line (`__supervise`, or with `--tmux-plan <file>`) reaches it without
 * commander's command tree (app/entry.ts): a supervisor lives as long as its agent, and what it loaded stays in
 * its memory (docs/development/design.md, "Memory of a running session").
 */
export async function superviseRun(ctx: Context, tmuxPlan: string | undefined): Promise<void> {
  if (tmuxPlan) {
    const { superviseInTmux } = await import('../sessions/run/tmux-run.js')
    await superviseInTmux(tmuxPlan, { TMUX: ctx.env.TMUX, TMUX_PANE: ctx.env.TMUX_PANE })
    return
  }
  const plan = await ctx.readStdin()
  const { superviseDetached } = await import('../sessions/run/runner.js')
  await superviseDetached(plan)
}
