import { ExternalToolError } from '../errors.js'
import { type GitEnvOptions, gitDetail, run } from './common.js'

/**
 * Commits everything uncommitted in a worktree (tracked changes and untracked files that are not ignored) on
 * its branch, so that a chain's next step, whose worktree starts from this branch, gets that work too
 * (docs/continuity.md, "Chains"). Returns the commit, or null when there was nothing to commit. The
 * repository's hooks are not run and nothing is signed: harness makes this commit, not the user.
 */
export async function commitUncommittedWork(
  worktreeDir: string,
  message: string,
  options: GitEnvOptions,
): Promise<string | null> {
  const status = await run(['status', '--porcelain=v1', '-z', '--untracked-files=all'], worktreeDir, options)
  if (status.stdout === '') return null
  await run(['add', '-A'], worktreeDir, options)
  const commit = await run(
    ['-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '--allow-empty-message', '-F', '-'],
    worktreeDir,
    { ...options, input: message, allowFailure: true },
  )
  if (commit.exitCode !== 0) {
    throw new ExternalToolError(
      `could not commit the work left in ${worktreeDir}: ${gitDetail(commit)}`,
      'commit it yourself in that worktree, then run the chain again',
      'GIT_FAILED',
    )
  }
  return (await run(['rev-parse', 'HEAD'], worktreeDir, options)).stdout.trim()
}
