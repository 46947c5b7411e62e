import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'

export function registerStats(session: CliCommand, ctx: Context): void {
  session
    .command('stats')
    .description('totals: sessions by status and agent, agent time, tokens and cost, disk used')
    .addHelpText(
      'after',
      `
Disk is the size of the files in harness's folders: records, logs, per-agent files
and worktrees. Tokens and cost are what the agents reported (see "session logs").

Examples:
  harness session stats
  harness session stats --json | jq '.disk.total'`,
    )
    .action(
      action(NO_FLAGS, async () => {
        const { sessionStats } = (await ctx.services.stats()).queryStats
        const { renderStats } = (await ctx.services.stats()).renderStats
        ctx.out.result(await sessionStats(ctx), (stats) => renderStats(stats))
      }),
    )
}
