import { join } from 'node:path'
import { copyPlainFile, createExclusive, ensureDir, pathExists, removeHeldSync } from '../disk/door.js'
import { type GitEnvOptions, gitAt, hasDotGitAbove } from './git.js'

/**
 * The git side of a container session (docs/backends.md): the agent commits into a private clone that harness
 * made, never into the repository's own `.git` (mounted read-only); its commits come back through a quarantine
 * repository (quarantine.ts), fetched into a harness ref and fast-forwarded onto the session's branch. Nothing
 * the agent wrote is run or trusted: git never runs in the clone once the agent could write it.
 */
export interface ContainerGit {
  /** The private clone (a bare git directory used with the worktree as its work tree). */
  gitDir: string
  /** The file mounted over the worktree's `.git` pointer inside: `gitdir: <gitDir>`. */
  pointerFile: string
  /** The branch's tip when the run started: what the branch may move from when its commits come back. */
  startTip: string
}

// Making the clone runs no hook (a bare clone runs none anyway).
const SAFE = ['-c', 'core.hooksPath=/dev/null']

/**
 * Makes the private clone for one run, afresh: a `--shared` bare clone of the session's branch (its objects
 * borrowed from the repository through alternates), with the host worktree's index so that the agent sees the
 * worktree's state as git on the host does.
 */
export async function prepareContainerGit(
  options: { repoDir: string; worktreeDir: string; branch: string; folder: string } & GitEnvOptions,
): Promise<ContainerGit> {
  const { repoDir, worktreeDir, branch, folder } = options
  const gitDir = join(folder, 'git')
  const pointerFile = join(folder, 'dot-git')
  removeHeldSync(folder)
  ensureDir(folder)
  const host = gitAt(repoDir, options)
  // The worktree's own index (same files, same stat data), found meanwhile.
  const indexPath = gitAt(worktreeDir, options).text([
    'rev-parse',
    '--path-format=absolute',
    '--git-path',
    'index',
  ])
  indexPath.catch(() => {}) // awaited below; a clone that fails first is the error to report
  const startTip = await host.text([
    'rev-parse',
    '--verify',
    '--end-of-options',
    `refs/heads/${branch}^{commit}`,
  ])
  await host.run([
    ...SAFE,
    'clone',
    '--quiet',
    '--bare',
    '--shared',
    '--no-tags',
    '--single-branch',
    `--branch=${branch}`,
    '--',
    repoDir,
    gitDir,
  ])
  // The clone's config is harness's (and read-only inside): edited as a file, never by git running in the clone.
  const config = join(gitDir, 'config')
  await host.run(['config', '--file', config, 'core.bare', 'false'])
  await host.run(['config', '--file', config, '--remove-section', 'remote.origin'])
  // Copied, so that `git status` inside matches the host's.
  const index = await indexPath
  if (pathExists(index)) copyPlainFile(index, join(gitDir, 'index'))
  removeHeldSync(join(gitDir, 'hooks'))
  ensureDir(join(gitDir, 'hooks'))
  createExclusive(pointerFile, `gitdir: ${gitDir}\n`)
  return { gitDir, pointerFile, startTip }
}

export type { CollectOutcome } from './quarantine.js'

/**
 * The checkout a `--no-worktree` container run's folder is in: its `.git` (a folder, or a linked worktree's
 * file) and its common dir; null outside a repository.
 */
export async function checkoutOf(
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ dotGit: string; commonDir: string } | null> {
  if (!hasDotGitAbove(dir)) return null
  const found = await gitAt(dir, { env }).try([
    'rev-parse',
    '--path-format=absolute',
    '--show-toplevel',
    '--git-common-dir',
  ])
  const [top, commonDir] = found.stdout.split('\n')
  if (found.exitCode !== 0 || !top || !commonDir) return null
  return { dotGit: join(top, '.git'), commonDir }
}
