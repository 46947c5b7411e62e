import { action } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { textFlag } from '../cli/options.js'

const AUTO_CLEANUP_FLAGS = {
  olderThan: textFlag('--older-than <duration>', 'internal: the threshold', { required: true }),
}

/** Hidden: the background cleanup `run` starts at most once a day (`cleanup.auto`, docs/history.md). */
export function registerAutoCleanup(program: CliCommand, ctx: Context): void {
  program
    .command('__auto-cleanup', { hidden: true })
    .description('internal: the daily background cleanup')
    .flags(AUTO_CLEANUP_FLAGS)
    .action(
      action(AUTO_CLEANUP_FLAGS, async (options) => {
        const { runAutoCleanup } = (await ctx.services.removal()).autoCleanup
        await runAutoCleanup(ctx, options.olderThan)
      }),
    )
}
