import { dirname, join } from 'node:path'
import {
  copyPlainFile,
  createExclusive,
  ensureDir,
  lstatPath,
  pathExists,
  removeHeldSync,
  setFileMode,
} from '../disk/door.js'
import { ExternalToolError } from '../errors.js'
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
  /** The repository's common git directory (mounted read-only: the clone borrows its objects). */
  commonDir: string
}

/**
 * Makes the private clone for one run, afresh, as `git clone --bare --shared --single-branch` of the session's
 * branch would, written as files (one git call in all, where a clone and its edits took six): its objects
 * borrowed from the repository through alternates, its branch at the tip the run starts from, harness's own
 * config (core.bare false; the file system's traits probed as `git init` probes them), no hooks, and the host
 * worktree's index so that the agent sees the worktree's state as git on the host does.
 */
export async function prepareContainerGit(
  options: { worktreeDir: string; branch: string; folder: string } & GitEnvOptions,
): Promise<ContainerGit> {
  const { worktreeDir, branch, folder } = options
  const gitDir = join(folder, 'git')
  const pointerFile = join(folder, 'dot-git')
  removeHeldSync(folder)
  // One call: the common dir, the worktree's own index (same files, same stat data) and the branch's tip.
  const [commonDir, indexPath, startTip] = await gitAt(worktreeDir, options).lines([
    'rev-parse',
    '--path-format=absolute',
    '--git-common-dir',
    '--git-path',
    'index',
    '--verify',
    '--end-of-options',
    `refs/heads/${branch}^{commit}`,
  ])
  if (!commonDir || !indexPath || !startTip || !OID.test(startTip)) {
    throw new ExternalToolError(`cannot read the branch ${branch} of ${worktreeDir}`)
  }
  for (const dir of ['objects/info', 'objects/pack', `refs/heads/${dirname(branch)}`, 'refs/tags', 'hooks']) {
    ensureDir(join(gitDir, dir))
  }
  createExclusive(join(gitDir, 'objects', 'info', 'alternates'), `${join(commonDir, 'objects')}\n`)
  createExclusive(join(gitDir, 'refs', 'heads', branch), `${startTip}\n`)
  createExclusive(join(gitDir, 'HEAD'), `ref: refs/heads/${branch}\n`)
  // The clone's config is harness's (and read-only inside): written as a file, never by git running in the clone.
  createExclusive(join(gitDir, 'config'), cloneConfig(gitDir, startTip.length === 64))
  // Copied, so that `git status` inside matches the host's.
  if (pathExists(indexPath)) copyPlainFile(indexPath, join(gitDir, 'index'))
  createExclusive(pointerFile, `gitdir: ${gitDir}\n`)
  return { gitDir, pointerFile, startTip, commonDir }
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

/**
 * The config `git clone --bare` writes (then core.bare false), with the traits `git init` probes in the folder:
 * whether the executable bit holds (core.filemode) and whether names differ by case (core.ignorecase).
 */
function cloneConfig(gitDir: string, sha256: boolean): string {
  const probe = join(gitDir, 'HEAD')
  const mode = lstatPath(probe).mode & 0o777
  setFileMode(probe, mode ^ 0o100)
  const filemode = (lstatPath(probe).mode & 0o777) !== mode
  setFileMode(probe, mode)
  const lines = [
    '[core]',
    `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
    `\tfilemode = ${filemode}`,
    '\tbare = false',
  ]
  if (pathExists(join(gitDir, 'hEaD'))) lines.push('\tignorecase = true')
  if (sha256) lines.push('[extensions]', '\tobjectformat = sha256')
  return `${lines.join('\n')}\n`
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
