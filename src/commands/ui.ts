import { action } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { boolFlag } from '../cli/options.js'
import { UsageError } from '../errors.js'

const UI_FLAGS = {
  allProjects: boolFlag('--all-projects', 'the sessions of every project you have run harness in'),
}

export function registerUi(program: CliCommand, ctx: Context): void {
  program
    .command('ui')
    .description('a terminal dashboard: every session, its live state, and keys to act on it')
    .flags(UI_FLAGS)
    .addHelpText(
      'after',
      `
Full screen, redrawn when a record changes. Keys (also under ?): enter attach to
a tmux session (or follow the log), s send a line, d diff, l logs, k kill,
p pause, r resume, m merge (its dry run first), n new session, / filter, q quit.
Needs a terminal (exit 2 without one). See docs/ui.md.

Examples:
  harness ui
  harness ui --all-projects`,
    )
    .action(
      action(UI_FLAGS, async (options) => {
        if (ctx.options.json) throw new UsageError('harness ui draws a screen: it has no --json')
        if (!ctx.stdinIsTerminal || !ctx.out.stdout.isTTY) {
          throw new UsageError(
            'harness ui needs a terminal (stdin and stdout)',
            'for scripts: harness session list --json',
            'NOT_A_TERMINAL',
          )
        }
        const { openDashboard } = await import('../cli/dashboard-run.js')
        await openDashboard(ctx, { allProjects: options.allProjects === true })
      }),
    )
}
