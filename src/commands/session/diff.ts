import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag } from '../../cli/options.js'
import { UsageError } from '../../errors.js'

const DIFF_FLAGS = {
  stat: boolFlag('--stat', 'a summary of changed files (git diff --stat)'),
  nameOnly: boolFlag('--name-only', 'only the changed paths, one per line'),
}

export function registerDiff(session: CliCommand, ctx: Context): void {
  session
    .command('diff <id>')
    .description(
      'what a session changed against its base commit (committed, uncommitted and untracked files)',
    )
    .flags(DIFF_FLAGS)
    .addHelpText(
      'after',
      `
Compares the worktree's files (commits, uncommitted edits and untracked files
that are not ignored) with the session's base_commit. When the worktree is gone,
the branch's commits are compared instead (said on stderr). --json prints
{id, base_commit, source, files, diff | stat, worktree, branch}.
Exit status 4 when there is nothing to compare (no worktree and no branch, or
no base commit). A session run with --no-worktree compares its folder, which
others may have changed too (said on stderr).

Examples:
  harness session diff 3f9a --stat
  harness session diff 3f9a | git apply   # the same changes in this checkout`,
    )
    .action(
      action(DIFF_FLAGS, async (options, id: string) => {
        if (options.stat && options.nameOnly)
          throw new UsageError('--stat and --name-only exclude each other')
        const mode = options.stat ? 'stat' : options.nameOnly ? 'name-only' : 'patch'
        const { diffSession } = (await ctx.services.work()).diff
        const result = await diffSession(ctx, id, mode)
        if (result.source === 'worktree' && !result.is_worktree) {
          ctx.out.info(
            `harness: session ${result.id} ran in ${result.worktree} itself (no worktree): this compares that folder with the session's base commit ${result.base_commit.slice(0, 12)}, so it may include changes made by others`,
          )
        }
        if (result.source === 'branch') {
          ctx.out.info(
            `harness: the worktree of session ${result.id} is gone: showing the commits of its branch ${result.branch}`,
          )
        }
        ctx.out.result(result, (data) => data.diff ?? data.stat ?? data.files.join('\n'), {
          escaped: true,
        })
      }),
    )
}
