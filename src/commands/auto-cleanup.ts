import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../cli/action.js'
import type { Context } from '../cli/context.js'

/** Hidden: the background cleanup `run` starts at most once a day (`cleanup.auto`, docs/history.md). */
export function registerAutoCleanup(program: Command, ctx: Context): void {
  program
    .command('__auto-cleanup', { hidden: true })
    .description('internal: the daily background cleanup')
    .requiredOption('--older-than <duration>', 'internal: the threshold')
    .action(
      action(z.object({ olderThan: z.string() }), async (options) => {
        const { runAutoCleanup } = await import('../sessions/removal/auto-cleanup.js')
        await runAutoCleanup(ctx, options.olderThan)
      }),
    )
}
