import * as z from 'zod/mini'
import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag, choiceFlag, listFlag, parsedFlag } from '../../cli/options.js'
import { UsageError } from '../../errors.js'
import type { SessionView } from '../../sessions/query/reconcile.js'
import { statusFlag } from './cleanup.js'

const LIST_FLAGS = {
  status: statusFlag('only these: running, paused, completed, failed, killed (comma-separated or repeated)'),
  agent: listFlag('--agent <agent>', 'only these agents (comma-separated or repeated)', { values: 'agents' }),
  limit: parsedFlag('--limit <n>', 'show at most n sessions', () =>
    z.pipe(z.string().check(z.regex(/^\d+$/, 'expected a whole number')), z.transform(Number)),
  ),
  sort: choiceFlag(
    '--sort <key>',
    'created | updated (AGE then counts from the last update)',
    ['created', 'updated'],
    {
      default: 'created',
    },
  ),
  watch: boolFlag('-w, --watch', 'keep the table on screen, redrawn as sessions change (Ctrl-C to quit)'),
  allProjects: boolFlag(
    '--all-projects',
    'the sessions of every project you ran harness in, with a PROJECT column (--json: project_dir)',
  ),
}

export function registerList(session: CliCommand, ctx: Context): void {
  session
    .command('list')
    .alias('ls')
    .description('list sessions, newest first')
    .flags(LIST_FLAGS)
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
  harness session ls --json | jq -r '.[] | select(.status == "FAILED") | .id'
  harness session list --all-projects --status running`,
    )
    .action(
      action(LIST_FLAGS, async (options) => {
        const { listSessions } = (await ctx.services.reading()).query
        const { renderSessionList, rowOf } = (await ctx.services.reading()).renderSession
        // Every project's (loaded only then), or this one's.
        const sessions = async function* (): AsyncGenerator<SessionView> {
          if (!options.allProjects) return yield* listSessions(ctx, options)
          const { listAllProjects } = await ctx.services.allProjects()
          yield* await listAllProjects(ctx, options)
        }
        // A table keeps every row until it is drawn: each as the row needs it, not the whole record.
        async function* rows() {
          for await (const view of sessions()) yield rowOf(view)
        }
        const home = ctx.env.HOME
        if (options.watch) {
          if (ctx.options.json || !ctx.out.stdout.isTTY) {
            throw new UsageError('--watch needs a terminal on stdout (and no --json)')
          }
          const { watchScreen } = (await ctx.services.reading()).watch
          await watchScreen(async () => {
            const views = []
            for await (const view of rows()) views.push(view)
            const table = renderSessionList(views, {
              width: ctx.out.stdout.columns,
              color: ctx.out.color,
              ageFrom: options.sort,
              home,
            })
            // The table escapes what it shows from records (and keeps its colours).
            return `harness session list --watch (Ctrl-C to quit)\n\n${table}`
          }, ctx.out.stdout)
          return
        }
        await ctx.out.resultList(
          ctx.options.json ? sessions() : rows(),
          (data) =>
            renderSessionList(data, {
              width: ctx.out.width,
              color: ctx.out.color,
              ageFrom: options.sort,
              home,
            }),
          { escaped: true },
        )
      }),
    )
}
