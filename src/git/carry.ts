import { type GitEnvOptions, gitAt, gitFailed } from './git.js'
import { stageWorktree } from './stage.js'

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
  const git = gitAt(worktreeDir, options)
  const status = await git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all'])
  if (status.stdout === '') return null
  const [indexFile = '', head = ''] = await git.lines([
    'rev-parse',
    '--path-format=absolute',
    '--git-path',
    'index',
    'HEAD',
  ])
  const staged = await stageWorktree(git, indexFile, head.length / 2 || 20)
  if (staged.exitCode !== 0) throw gitFailed(['add'], staged)
  const args = [
    '-c',
    'commit.gpgsign=false',
    'commit',
    '-q',
    '--no-verify',
    '--allow-empty-message',
    '-F',
    '-',
  ]
  const commit = await git.try(args, { input: message })
  if (commit.exitCode !== 0) {
    throw gitFailed(args, commit, `commit the work left in ${worktreeDir} yourself, then run the chain again`)
  }
  return git.text(['rev-parse', 'HEAD'])
}
