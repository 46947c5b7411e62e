import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action, collect } from '../../cli/action.js'
import type { Context } from '../../cli/context.js'
import { UsageError } from '../../errors.js'
import { SessionStatusSchema } from '../../sessions/record/schema.js'

const ListOptionsSchema = z.object({
  status: z.optional(z.array(SessionStatusSchema)),
  agent: z.optional(z.array(z.string())),
  limit: z.optional(
    z.pipe(z.string().check(z.regex(/^\d+$/, 'expected a whole number')), z.transform(Number)),
  ),
  sort: z.enum(['created', 'updated']),
  watch: z.optional(z.boolean()),
})

export function registerList(session: Command, ctx: Context): void {
  session
    .command('list')
    .alias('ls')
    .description('list sessions, newest first')
    .option(
      '--status <status>',
      'only these: running, paused, completed, failed, killed (comma-separated or repeated)',
      collect,
    )
    .option('--agent <agent>', 'only these agents (comma-separated or repeated)', collect)
    .option('--limit <n>', 'show at most n sessions')
    .option('--sort <key>', 'created | updated (AGE then counts from the last update)', 'created')
    .option('-w, --watch', 'keep the table on screen, redrawn as sessions change (Ctrl-C to quit)')
    .addHelpText(
      'after',
      `
Newest first (by creation, or by last update with --sort updated; AGE counts
from the same time). The table fits the terminal (or COLUMNS); piped without COLUMNS,
nothing is cut. A RUNNING session whose processes are not verifiably alive
shows its liveness: RUNNING (orphaned).

Examples:
  harness session list --status running,paused
  harness session list --watch --status running
  harness session ls --json | jq -r '.[] | select(.status == "FAILED") | .id'`,
    )
    .action(
      action(ListOptionsSchema, async (options) => {
        const { listSessions } = await import('../../sessions/query/query.js')
        const { renderSessionList } = await import('../../render/session.js')
        if (options.watch) {
          if (ctx.options.json || !ctx.out.stdout.isTTY) {
            throw new UsageError('--watch needs a terminal on stdout (and no --json)')
          }
          const { watchScreen } = await import('../../cli/watch.js')
          await watchScreen(async () => {
            const views = []
            for await (const view of listSessions(ctx, options)) views.push(view)
            const table = renderSessionList(views, {
              width: ctx.out.stdout.columns,
              color: ctx.out.color,
              ageFrom: options.sort,
            })
            // The table escapes what it shows from records (and keeps its colours).
            return `harness session list --watch (Ctrl-C to quit)\n\n${table}`
          }, ctx.out.stdout)
          return
        }
        await ctx.out.resultList(
          listSessions(ctx, options),
          (data) =>
            renderSessionList(data, { width: ctx.out.width, color: ctx.out.color, ageFrom: options.sort }),
          { escaped: true },
        )
      }),
    )
}
