import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag } from '../../cli/options.js'
import { SAFETY_RULES } from './cleanup.js'

const DELETE_FLAGS = {
  force: boolFlag('--force', 'also remove a dirty worktree or an unmerged branch, after snapshotting it'),
  dryRun: boolFlag('--dry-run', 'print the plan; change nothing at all'),
}

export function registerDelete(session: CliCommand, ctx: Context): void {
  session
    .command('delete <id>')
    .alias('rm')
    .description('remove one session: worktree, branch, log and record (same safety rules as cleanup)')
    .flags(DELETE_FLAGS)
    .addHelpText(
      'after',
      `${SAFETY_RULES}

A foreign record (not sealed by harness for you) is removed alone: its file, nothing it names.

Exit status: 0 when the session was removed (or, with --dry-run, for any plan);
4 when it is RUNNING or was kept by these rules (the message says why).

Examples:
  harness session delete 3f9a
  harness session rm 3f9a --force   # snapshot under refs/harness/3f9a…/ first`,
    )
    .action(
      action(DELETE_FLAGS, async (options, id: string) => {
        const { deleteSession } = (await ctx.services.removal()).removalCleanup
        const { renderRemovalReport } = (await ctx.services.removal()).renderCleanup
        const report = await deleteSession(ctx, id, {
          force: options.force === true,
          dryRun: options.dryRun === true,
        })
        ctx.out.result(report, (data) => renderRemovalReport(data))
      }),
    )
}
