import { existsSync, lstatSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { ExternalToolError, IllegalStateError, UsageError } from '../errors.js'
import { assertRefArg, canonicalPath, type GitEnvOptions, gitDetail, run, splitZ } from './common.js'
import { listWorktrees, type WorktreeInfo } from './worktree-list.js'

/**
 * Batched, read-once views of a repository for removing many sessions (cleanup, prune): one `worktree list`
 * and one `for-each-ref` for everything instead of several git calls per session.
 */
export interface RemovalState {
  /** Any directory of the repository; every git call runs here. */
  repo: string
  /** Main worktree first. */
  worktrees: WorktreeInfo[]
  /** Local branches: short name → tip. */
  branches: Map<string, string>
  /** Remote-tracking branches: short name (`origin/main`) → tip. */
  remotes: Map<string, string>
  /** Branches with a `[branch "<name>"]` config section (upstream, description), dropped with the branch. */
  configured: Set<string>
  /**
   * Full ref names every branch may be merged into: the branch checked out in the main worktree and its
   * upstream, when there are such.
   */
  mainTargets: string[]
}

export async function readRemovalState(repo: string, options: GitEnvOptions): Promise<RemovalState> {
  const [worktrees, refs, config] = await Promise.all([
    listWorktrees(repo, options),
    run(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/', 'refs/remotes/'], repo, options),
    run(['config', '--null', '--name-only', '--get-regexp', '^branch\\.'], repo, {
      ...options,
      allowFailure: true,
    }),
  ])
  const branches = new Map<string, string>()
  const remotes = new Map<string, string>()
  for (const line of refs.stdout.split('\n')) {
    const space = line.indexOf(' ')
    if (space < 0) continue
    const commit = line.slice(0, space)
    const ref = line.slice(space + 1)
    if (ref.startsWith('refs/heads/')) branches.set(ref.slice('refs/heads/'.length), commit)
    else if (ref.startsWith('refs/remotes/') && !ref.endsWith('/HEAD'))
      remotes.set(ref.slice('refs/remotes/'.length), commit)
  }
  const configured = new Set<string>()
  for (const key of config.exitCode === 0 ? splitZ(config.stdout) : []) {
    // branch.<name>.<variable>; the name itself may hold dots.
    const name = key.slice('branch.'.length, key.lastIndexOf('.'))
    if (name) configured.add(name)
  }
  const mainTargets: string[] = []
  const mainBranch = worktrees[0]?.isMain ? worktrees[0].branch : null
  if (mainBranch && branches.has(mainBranch)) {
    assertRefArg(mainBranch, 'branch name')
    mainTargets.push(`refs/heads/${mainBranch}`)
    const upstream = await run(['rev-parse', '--symbolic-full-name', `${mainBranch}@{upstream}`], repo, {
      ...options,
      allowFailure: true,
    })
    const ref = upstream.stdout.trim()
    if (upstream.exitCode === 0 && ref.startsWith('refs/')) mainTargets.push(ref)
  }
  return { repo, worktrees, branches, remotes, configured, mainTargets }
}

/** Short names of the local branches whose tip is reachable from `target` (a full ref name or a commit). */
export async function branchesMergedInto(
  repo: string,
  target: string,
  options: GitEnvOptions,
): Promise<Set<string>> {
  assertRefArg(target, 'revision')
  const result = await run(
    ['for-each-ref', '--format=%(refname:strip=2)', `--merged=${target}`, 'refs/heads/'],
    repo,
    { ...options, allowFailure: true },
  )
  // A target that no longer resolves merges nothing.
  if (result.exitCode !== 0) return new Set()
  return new Set(result.stdout.split('\n').filter(Boolean))
}

/** Whether `commit` is reachable from `from` (both commits or full ref names). */
export async function isAncestor(
  repo: string,
  commit: string,
  from: string,
  options: GitEnvOptions,
): Promise<boolean> {
  assertRefArg(commit, 'commit')
  assertRefArg(from, 'revision')
  const result = await run(['merge-base', '--is-ancestor', commit, from], repo, {
    ...options,
    allowFailure: true,
  })
  if (result.exitCode === 0) return true
  if (result.exitCode === 1) return false
  // An unknown object (e.g. a base commit that was garbage-collected) contains nothing.
  if (/not a valid|bad object|unknown revision|no such/i.test(result.stderr)) return false
  throw new ExternalToolError(`git merge-base failed: ${gitDetail(result)}`, undefined, 'GIT_FAILED')
}

/** How many commits reachable from `tip` none of `excluded` contains (excluded must resolve). */
export async function countCommitsNotIn(
  repo: string,
  tip: string,
  excluded: string[],
  options: GitEnvOptions,
): Promise<number> {
  assertRefArg(tip, 'commit')
  for (const ref of excluded) assertRefArg(ref, 'revision')
  const result = await run(['rev-list', '--count', tip, '--not', ...excluded, '--'], repo, options)
  return Number(result.stdout.trim())
}

/** Whether any local or remote-tracking branch contains `commit` (a detached HEAD that is not lost). */
export async function onSomeBranch(repo: string, commit: string, options: GitEnvOptions): Promise<boolean> {
  assertRefArg(commit, 'commit')
  const result = await run(
    [
      'for-each-ref',
      '--count=1',
      '--format=%(refname)',
      `--contains=${commit}`,
      'refs/heads/',
      'refs/remotes/',
    ],
    repo,
    { ...options, allowFailure: true },
  )
  return result.exitCode === 0 && result.stdout.trim() !== ''
}

/**
 * Removes a worktree already looked up in `listWorktrees` (saves a listing per call when removing many).
 * Without `force` git refuses a worktree with tracked changes or untracked files that are not ignored:
 * 'dirty' is returned and nothing is touched. A registration whose folder is gone is just dropped.
 */
export async function removeListedWorktree(
  repo: string,
  entry: WorktreeInfo,
  options: GitEnvOptions & { force?: boolean },
): Promise<'removed' | 'dirty'> {
  refuseUnremovable(entry)
  const force = options.force ? ['--force'] : []
  const result = await run(['worktree', 'remove', ...force, '--', entry.path], repo, {
    ...options,
    allowFailure: true,
  })
  if (result.exitCode === 0) return 'removed'
  if (/modified or untracked files/.test(result.stderr)) return 'dirty'
  throw new ExternalToolError(`git worktree remove failed: ${gitDetail(result)}`, undefined, 'GIT_FAILED')
}

/**
 * Compare-and-delete of a local branch: deleted only while it still points at `expectedTip` (else
 * BRANCH_MOVED, and it stays). False when it was already gone. `dropConfig` also removes its config section,
 * as `git branch -D` does.
 */
export async function deleteBranchAt(
  repo: string,
  name: string,
  expectedTip: string,
  options: GitEnvOptions & { dropConfig?: boolean },
): Promise<boolean> {
  assertRefArg(name, 'branch name')
  assertRefArg(expectedTip, 'commit')
  const ref = `refs/heads/${name}`
  const result = await run(['update-ref', '-m', 'harness: delete branch', '-d', ref, expectedTip], repo, {
    ...options,
    allowFailure: true,
  })
  if (result.exitCode !== 0) {
    const now = await run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], repo, {
      ...options,
      allowFailure: true,
    })
    if (now.exitCode !== 0) return false
    throw new IllegalStateError(
      `branch "${name}" moved to ${now.stdout.trim().slice(0, 12)} (expected ${expectedTip.slice(0, 12)}); not deleted`,
      `look at it with "git log ${name}" before deleting it`,
      'BRANCH_MOVED',
    )
  }
  if (options.dropConfig) await dropBranchConfig(repo, name, options)
  return true
}

/** Full names of the refs under `prefix` (e.g. `refs/harness/3f9a12c8/`). */
export async function refsUnder(repo: string, prefix: string, options: GitEnvOptions): Promise<string[]> {
  assertRefArg(prefix, 'ref prefix')
  const result = await run(['for-each-ref', '--format=%(refname)', prefix], repo, options)
  return result.stdout.split('\n').filter(Boolean)
}

/** When a branch was created, from the oldest entry of its reflog; null when it has no reflog. */
export async function branchCreatedAt(
  repo: string,
  name: string,
  options: GitEnvOptions,
): Promise<Date | null> {
  assertRefArg(name, 'branch name')
  const result = await run(
    ['reflog', 'show', '--date=unix', '--format=%gd', `refs/heads/${name}`, '--'],
    repo,
    { ...options, allowFailure: true },
  )
  if (result.exitCode !== 0) return null
  const oldest = result.stdout.trim().split('\n').pop() ?? ''
  const seconds = /@\{(\d+)\}$/.exec(oldest)?.[1]
  return seconds ? new Date(Number(seconds) * 1000) : null
}

/** What `git worktree prune` would drop (registrations whose folder is gone), without dropping anything. */
export async function prunableRegistrations(repo: string, options: GitEnvOptions): Promise<string[]> {
  const result = await run(['worktree', 'prune', '--dry-run', '--verbose'], repo, options)
  return `${result.stdout}\n${result.stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
}

/**
 * The batched removal's way of removing a worktree (docs/design.md, "Removal"): its folder is deleted
 * directly, and `dropRegistrations` then drops what git keeps of it. Refuses the main worktree, a locked one,
 * and a folder whose `.git` is not a file naming this registration (replaced since it was listed). Everything
 * but `.git` goes first, so that a failure midway leaves a registration git still knows. False when the
 * folder was already gone.
 */
export function removeWorktreeFolder(entry: WorktreeInfo): boolean {
  refuseUnremovable(entry)
  if (!existsSync(entry.path)) return false
  const dotGit = join(entry.path, '.git')
  if (!isLinkedCheckout(dotGit)) {
    throw new IllegalStateError(
      `${entry.path} is no longer the worktree git registered (its .git changed): left alone`,
      undefined,
      'NOT_A_WORKTREE',
    )
  }
  for (const name of readdirSync(entry.path)) {
    if (name !== '.git') rmSync(join(entry.path, name), { recursive: true, force: true })
  }
  unlinkSync(dotGit)
  rmdirSync(entry.path)
  return true
}

/** A `.git` file (not a folder, not a link) naming an admin folder whose `gitdir` names this file back. */
function isLinkedCheckout(dotGit: string): boolean {
  try {
    if (!lstatSync(dotGit).isFile()) return false
    const admin = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim()
    if (!admin) return false
    const adminDir = resolve(dirname(dotGit), admin)
    const back = readFileSync(join(adminDir, 'gitdir'), 'utf8').trim()
    return canonicalPath(resolve(adminDir, back)) === canonicalPath(dotGit)
  } catch {
    return false
  }
}

/**
 * Drops the registrations of worktrees whose folders `removeWorktreeFolder` deleted: one `git worktree
 * prune`, unless it would also drop a registration that is not one of `removed` (someone's worktree whose
 * folder is gone, maybe the only holder of its commits); then `git worktree remove` of each of ours.
 */
export async function dropRegistrations(
  repo: string,
  removed: string[],
  options: GitEnvOptions,
): Promise<void> {
  if (removed.length === 0) return
  const ours = new Set(removed.map(canonicalPath))
  const listed = await listWorktrees(repo, options)
  const foreign = listed.some((w) => !w.isMain && w.prunable && !ours.has(canonicalPath(w.path)))
  if (!foreign) {
    await run(['worktree', 'prune'], repo, options)
    return
  }
  for (const entry of listed) {
    if (entry.isMain || entry.locked || !ours.has(canonicalPath(entry.path))) continue
    await run(['worktree', 'remove', '--force', '--', entry.path], repo, options)
  }
}

/** One ref to delete; with `old`, only while it still points there. */
export interface RefDeletion {
  ref: string
  old?: string
}

/**
 * Deletes `deletions` in one `git update-ref --stdin` transaction: all of them or, when any fails (a branch
 * that moved or is gone), none; false then, and the caller deletes them one at a time to find out which.
 */
export async function deleteRefsAtomically(
  repo: string,
  deletions: RefDeletion[],
  options: GitEnvOptions,
): Promise<boolean> {
  if (deletions.length === 0) return true
  let input = ''
  for (const { ref, old } of deletions) {
    assertRefArg(ref, 'ref')
    if (/\s/.test(ref) || !ref.startsWith('refs/')) {
      throw new UsageError(`invalid ref name ${JSON.stringify(ref)}`, undefined, 'INVALID_REF')
    }
    if (old !== undefined) assertRefArg(old, 'commit')
    input += old === undefined ? `delete ${ref}\n` : `delete ${ref} ${old}\n`
  }
  const result = await run(['update-ref', '-m', 'harness: delete session', '--stdin'], repo, {
    ...options,
    input,
    allowFailure: true,
  })
  return result.exitCode === 0
}

/** Removes a branch's `[branch "<name>"]` config section (upstream, description), as `git branch -D` does. */
export async function dropBranchConfig(repo: string, name: string, options: GitEnvOptions): Promise<void> {
  assertRefArg(name, 'branch name')
  await run(['config', '--remove-section', `branch.${name}`], repo, { ...options, allowFailure: true })
}

/** Neither removal touches the main worktree, nor a locked one: its folder may be on a device that is not mounted. */
function refuseUnremovable(entry: WorktreeInfo): void {
  if (entry.isMain)
    throw new IllegalStateError(`${entry.path} is the main worktree`, undefined, 'MAIN_WORKTREE')
  if (entry.locked) {
    throw new IllegalStateError(
      `worktree ${entry.path} is locked${entry.lockedReason ? ` (${entry.lockedReason})` : ''}`,
      'unlock it with "git worktree unlock" first',
      'WORKTREE_LOCKED',
    )
  }
}
