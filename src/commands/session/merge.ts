import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag, textFlag } from '../../cli/options.js'
import { ExitCode, ExitRequest } from '../../errors.js'

const MERGE_FLAGS = {
  squash: boolFlag('--squash', 'one commit with the task (or -m) as its message'),
  rebase: boolFlag('--rebase', "replay the session's commits onto the base branch"),
  dryRun: boolFlag('--dry-run', 'say what would happen (conflicts included) and change nothing'),
  message: textFlag(
    '-m, --message <text>',
    'message for the commit of uncommitted work in the worktree; with --squash, of the squashed commit',
  ),
}

export function registerMerge(session: CliCommand, ctx: Context): void {
  session
    .command('merge <id>')
    .description("land a session's work on its base branch in the main worktree")
    .flags(MERGE_FLAGS)
    .addHelpText(
      'after',
      `
Uncommitted work in the session's worktree is committed on its branch first
(message: the task's first line and the session id). Then the branch lands on
the base branch it was started from, in the main worktree: a merge commit by
default, one squashed commit with --squash, or the commits replayed with
--rebase. Conflicts are found before anything is touched.

Refused (exit 4, saying why) while the session runs, when the main worktree has
uncommitted changes or is not on the base branch, and on conflicts (the files
are listed; nothing is changed). --dry-run prints the same checks and exits 4
when the merge would be refused. Afterwards "harness session cleanup" sees the
branch as merged. A session merged before is refused too (ALREADY_MERGED,
exit 4) unless it has work since: new commits or uncommitted changes.

Examples:
  harness session merge 3f9a --dry-run
  harness session merge 3f9a --squash -m "Add auth endpoints"
  harness session merge 3f9a --json | jq -r .merge_commit`,
    )
    .action(
      action(MERGE_FLAGS, async (options, id: string) => {
        const { mergeSession } = (await ctx.services.work()).workMerge
        const { renderMerge } = (await ctx.services.work()).renderMerge
        const result = await mergeSession(ctx, id, options)
        ctx.out.result(result, renderMerge)
        if (result.outcome === 'refused') throw new ExitRequest(ExitCode.IllegalState)
      }),
    )
}
