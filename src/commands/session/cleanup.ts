import * as z from 'zod/mini'
import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag, listFlag, textFlag } from '../../cli/options.js'
import { olderThanFlag } from '../../duration.js'
import { ExitRequest } from '../../errors.js'
import { SESSION_STATUSES, type SessionStatus } from '../../sessions/record/status.js'

/** `--status <status>`, as list, cleanup and archive declare it: statuses in any case, comma-separated or repeated. */
export function statusFlag(description: string) {
  return listFlag('--status <status>', description, {
    item: statusSchema,
    choices: SESSION_STATUSES.map((status) => status.toLowerCase()),
  })
}

/** A status as records hold it, read in any case ("running" is RUNNING); made on first use. */
function statusSchema() {
  statusItem ??= z.pipe(
    z.pipe(
      z.string(),
      z.transform((s) => s.toUpperCase()),
    ),
    z.enum(SESSION_STATUSES),
  )
  return statusItem
}
let statusItem: z.ZodMiniType<SessionStatus, string> | undefined

/** How cleanup and archive choose sessions: the same flags, the same selection. */
export const SELECTION_FLAGS = {
  olderThan: textFlag(
    '--older-than <duration>',
    'only sessions inactive this long: 30 (days), 12h, 2w, 90m (default: cleanup.older_than, else 7d)',
  ),
  status: statusFlag('only these: paused, completed, failed, killed (comma-separated or repeated)'),
}

/** The flags after the selection that cleanup and archive share. */
export const REMOVAL_FLAGS = {
  force: boolFlag('--force', 'also remove dirty worktrees and unmerged branches, after snapshotting them'),
  dryRun: boolFlag('--dry-run', 'print the plan; change nothing at all'),
}

/** The selection as cleanup's and archive's services take it, with a progress line named `what`. */
export function selectionOf(
  options: { olderThan?: string; status?: SessionStatus[]; force?: boolean; dryRun?: boolean },
  ctx: Context,
  what: string,
) {
  return {
    olderThan: olderThanFlag(options.olderThan),
    status: options.status,
    force: options.force === true,
    dryRun: options.dryRun === true,
    progress: ctx.out.progress(what),
  }
}

/** The safety rules, shown by `--help` of cleanup, delete and prune. */
export const SAFETY_RULES = `
Safety rules (nothing that would lose work is removed, unless --force, which
snapshots it first):
  - A RUNNING session is never touched.
  - A worktree with a tracked change or an untracked file that is not ignored
    is kept and reported.
  - A branch with commits that are not merged into its base is kept and
    reported. Merged means: every commit is reachable from the recorded base
    branch (if it still exists), from the branch checked out in the main
    worktree, or from that branch's upstream. A branch with no commits beyond
    its base_commit goes.
  - --force first stores a commit of every file of the worktree (untracked ones
    too) under refs/harness/<id>/worktree and the branch tip under
    refs/harness/<id>/branch, then removes; the output says how to get them
    back:
      git branch restore-<id> refs/harness/<id>/branch
      git worktree add <dir> refs/harness/<id>/worktree
  - Never removed, even with --force: a locked worktree, a branch checked out in
    another worktree, a branch that moved while it was being removed, a folder
    that is not a git worktree, the worktree the command runs in, a worktree
    holding a nested git repository or submodule.
  - Order: snapshot refs, worktree, branch, log, and the record last: an
    interrupted run leaves a record that points at whatever is left.

Warning: with the default worktree.root (.harness/worktrees, inside the
repository), \`git clean -fdx\` deletes .harness/ entirely: records, logs and
worktrees with their uncommitted work, beyond any rule above. Set worktree.root
in .harness/config.json (e.g. "../<repo>.worktrees") to keep worktrees outside.`

const CLEANUP_FLAGS = { ...SELECTION_FLAGS, ...REMOVAL_FLAGS }

export function registerCleanup(session: CliCommand, ctx: Context): void {
  session
    .command('cleanup')
    .description('remove finished sessions older than a threshold: worktree, branch, log and record')
    .flags(CLEANUP_FLAGS)
    .addHelpText(
      'after',
      `${SAFETY_RULES}

Age is the time since the latest of completed_at, the last run's ended_at and
created_at. Kept sessions are reported and the exit status is still 0; it is 1
only when something failed.

Examples:
  harness session cleanup --dry-run
  harness session cleanup --older-than 2w --status completed,failed`,
    )
    .action(
      action(CLEANUP_FLAGS, async (options) => {
        const { cleanupSessions } = (await ctx.services.removal()).removalCleanup
        const { anyFailed } = (await ctx.services.removal()).decision
        const { renderRemovalReport } = (await ctx.services.removal()).renderCleanup
        const report = await cleanupSessions(ctx, selectionOf(options, ctx, 'cleanup'))
        ctx.out.result(report, (data) => renderRemovalReport(data))
        if (anyFailed(report.kept)) throw new ExitRequest(1)
      }),
    )
}
