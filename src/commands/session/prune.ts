import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag, textFlag } from '../../cli/options.js'
import { olderThanFlag } from '../../duration.js'
import { ExitRequest } from '../../errors.js'
import { SAFETY_RULES } from './cleanup.js'

const PRUNE_FLAGS = {
  olderThan: textFlag(
    '--older-than <duration>',
    'leave alone anything younger than this: 30 (days), 12h, 90m, 0 for everything (default 1h)',
  ),
  force: boolFlag('--force', 'also remove dirty worktrees and unmerged branches, after snapshotting them'),
  dryRun: boolFlag('--dry-run', 'print the plan; change nothing at all'),
}

export function registerPrune(session: CliCommand, ctx: Context): void {
  session
    .command('prune')
    .description(
      'remove harness/* branches, their worktrees and folders under the worktree root that no record owns',
    )
    .flags(PRUNE_FLAGS)
    .addHelpText(
      'after',
      `${SAFETY_RULES.replace(/<id>/g, '<name>')}

Owned, so never pruned: the branch and worktree of every record, and
harness/<id> and <worktree root>/<id> for every record file, even one that
cannot be read. Never pruned: the main worktree, worktrees elsewhere that are
not on a harness/* branch, a folder under the worktree root that is not a git
worktree (reported; an empty one is removed). <name> is the branch without
"harness/", or the worktree's folder name. Orphans younger than --older-than
are left alone: a run that is still setting up its worktree has no record yet.
Afterwards "git worktree prune" drops registrations whose folder is gone.

Examples:
  harness session prune --dry-run
  harness session prune`,
    )
    .action(
      action(PRUNE_FLAGS, async (options) => {
        const olderThan = olderThanFlag(options.olderThan)
        const { pruneOrphans } = (await ctx.services.removal()).prune
        const { anyFailed } = (await ctx.services.removal()).decision
        const { renderPruneReport } = (await ctx.services.removal()).renderCleanup
        const report = await pruneOrphans(ctx, {
          progress: ctx.out.progress('prune'),
          olderThan,
          force: options.force === true,
          dryRun: options.dryRun === true,
        })
        ctx.out.result(report, renderPruneReport)
        if (anyFailed(report.kept)) throw new ExitRequest(1)
      }),
    )
}
