import { join } from 'node:path'
import {
  copyPlainFile,
  createExclusive,
  ensureDir,
  lstatPath,
  pathExists,
  removeHeldSync,
  unlinkQuiet,
} from '../disk/door.js'
import { type GitEnvOptions, gitAt } from './git.js'

/**
 * The git side of a container session (docs/backends.md): the agent commits into a private clone that harness
 * made, never into the repository's own `.git` (mounted read-only); its commits come back as a bundle, fetched
 * into a harness ref and fast-forwarded onto the session's branch. Nothing the agent wrote is run or trusted:
 * the clone's config and hooks are harness's own and read-only inside, and the branch moves only forward.
 */
export interface ContainerGit {
  /** The private clone (a bare git directory used with the worktree as its work tree). */
  gitDir: string
  /** The file mounted over the worktree's `.git` pointer inside: `gitdir: <gitDir>`. */
  pointerFile: string
  /** The branch's tip when the run started: the bundle's prerequisite, and what the branch may move from. */
  startTip: string
}

// Nothing configured by whoever wrote the directory runs: no hooks, no fsmonitor, no external diff.
const SAFE = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'safe.bareRepository=all']

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
  const clone = gitAt(gitDir, options)
  await clone.run(['--git-dir=.', 'config', 'core.bare', 'false'])
  await clone.run(['--git-dir=.', 'config', '--remove-section', 'remote.origin'])
  // The worktree's own index (same files, same stat data): `git status` inside matches the host's.
  const index = await gitAt(worktreeDir, options).text([
    'rev-parse',
    '--path-format=absolute',
    '--git-path',
    'index',
  ])
  if (pathExists(index)) copyPlainFile(index, join(gitDir, 'index'))
  removeHeldSync(join(gitDir, 'hooks'))
  ensureDir(join(gitDir, 'hooks'))
  createExclusive(pointerFile, `gitdir: ${gitDir}\n`)
  return { gitDir, pointerFile, startTip }
}

export type CollectOutcome =
  | { kind: 'none' }
  | { kind: 'fast-forward'; from: string; to: string; commits: number }
  /** The agent's branch does not contain the start (history rewritten): kept under `ref`, branch untouched. */
  | { kind: 'diverged'; ref: string; tip: string }
  | { kind: 'failed'; reason: string }

/**
 * Brings the agent's commits onto `branch`: a bundle of `startTip..branch` made from the private clone, fetched
 * into `refs/harness/<id>/container`, and the branch moved only by fast-forward from `startTip` (compare and
 * swap); the host worktree's index is then reset to the new tip, and its files stay as the agent left them.
 */
export async function collectContainerCommits(
  options: {
    repoDir: string
    worktreeDir: string
    branch: string
    id: string
    git: ContainerGit
    bundleFile: string
  } & GitEnvOptions,
): Promise<CollectOutcome> {
  const { repoDir, worktreeDir, branch, id, git, bundleFile } = options
  // A `commondir` file would point git at another repository's config: the clone is not used then.
  if (!isPlainDir(git.gitDir) || pathExists(join(git.gitDir, 'commondir'))) {
    return { kind: 'failed', reason: 'the private git directory was tampered with' }
  }
  // Run beside the git directory, not in it: its own files (refs/heads/…) would read as paths there.
  const clone = gitAt(join(git.gitDir, '..'), options)
  const tip = await clone.try([
    ...SAFE,
    `--git-dir=${git.gitDir}`,
    'rev-parse',
    '--verify',
    '--end-of-options',
    `refs/heads/${branch}^{commit}`,
  ])
  const agentTip = tip.stdout.trim()
  if (tip.exitCode !== 0 || agentTip === git.startTip) return { kind: 'none' }
  ensureDir(join(bundleFile, '..'))
  unlinkQuiet(bundleFile)
  const made = await clone.try([
    ...SAFE,
    `--git-dir=${git.gitDir}`,
    'bundle',
    'create',
    '--quiet',
    bundleFile,
    `refs/heads/${branch}`,
    `^${git.startTip}`,
  ])
  if (made.exitCode !== 0) return { kind: 'failed', reason: made.stderr.trim() || 'git bundle failed' }
  const host = gitAt(repoDir, options)
  const ref = `refs/harness/${id}/container`
  try {
    const fetched = await host.try([
      ...SAFE,
      '-c',
      'transfer.fsckObjects=true',
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--force',
      bundleFile,
      `refs/heads/${branch}:${ref}`,
    ])
    if (fetched.exitCode !== 0) return { kind: 'failed', reason: fetched.stderr.trim() || 'git fetch failed' }
    const to = await host.text(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`])
    if (!(await host.check(['merge-base', '--is-ancestor', git.startTip, to]))) {
      return { kind: 'diverged', ref, tip: to }
    }
    await host.run([
      'update-ref',
      '-m',
      `harness: commits of session ${id} from its container`,
      `refs/heads/${branch}`,
      to,
      git.startTip,
    ])
    // The branch moved under the worktree: its index follows (mixed reset), its files are left as they are.
    await gitAt(worktreeDir, options).run([...SAFE, 'reset', '--quiet', '--no-refresh'])
    const count = await host.text(['rev-list', '--count', `${git.startTip}..${to}`])
    await host.run(['update-ref', '-d', ref])
    return { kind: 'fast-forward', from: git.startTip, to, commits: Number(count) }
  } finally {
    unlinkQuiet(bundleFile)
  }
}

function isPlainDir(path: string): boolean {
  try {
    const stat = lstatPath(path)
    return stat.isDirectory() && !stat.isSymbolicLink()
  } catch {
    return false
  }
}
