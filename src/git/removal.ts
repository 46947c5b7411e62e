import { basename, dirname, join, resolve } from 'node:path'
import {
  emptyDirHeld,
  entryExists,
  HeldDir,
  pathExists,
  readText,
  removeEmptyDirAsync,
  unlinkAsync,
} from '../disk/door.js'
import { IllegalStateError } from '../errors.js'
import type { WorktreeLayout } from './clean-check.js'
import { assertRefArg, canonicalPath } from './common.js'
import { type GitEnvOptions, gitAt, splitZ } from './git.js'
import { refuseUnremovable } from './worktree.js'
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
  const git = gitAt(repo, options)
  const [worktrees, refs, config] = await Promise.all([
    listWorktrees(repo, options),
    git.lines(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads/', 'refs/remotes/']),
    git.try(['config', '--null', '--name-only', '--get-regexp', '^branch\\.']),
  ])
  const branches = new Map<string, string>()
  const remotes = new Map<string, string>()
  for (const line of refs) {
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
    const upstream = await git.try(['rev-parse', '--symbolic-full-name', `${mainBranch}@{upstream}`])
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
  const result = await gitAt(repo, options).try([
    'for-each-ref',
    '--format=%(refname:strip=2)',
    `--merged=${target}`,
    'refs/heads/',
  ])
  // A target that no longer resolves merges nothing.
  if (result.exitCode !== 0) return new Set()
  return new Set(result.stdout.split('\n').filter(Boolean))
}

/** Whether any local or remote-tracking branch contains `commit` (a detached HEAD that is not lost). */
export async function onSomeBranch(repo: string, commit: string, options: GitEnvOptions): Promise<boolean> {
  assertRefArg(commit, 'commit')
  const result = await gitAt(repo, options).try([
    'for-each-ref',
    '--count=1',
    '--format=%(refname)',
    `--contains=${commit}`,
    'refs/heads/',
    'refs/remotes/',
  ])
  return result.exitCode === 0 && result.stdout.trim() !== ''
}

/**
 * The batched removal's way of removing a worktree (docs/development/design.md, "Removal"): its folder is
 * deleted directly, and `dropRegistrations` then drops what git keeps of it. Refuses the main worktree, a
 * locked one, and a folder whose `.git` is not a file naming this registration (replaced since it was
 * listed). Everything but `.git` goes first, so that a failure midway leaves a registration git still knows.
 * False when the folder was already gone. `layout`, what the worktree held when it was proven clean, is
 * deleted by name first (no lstat of each file, no reading of each folder); whatever it does not cover is
 * then found and deleted by the walk of the folder, as without it.
 */
export async function removeWorktreeFolder(entry: WorktreeInfo, layout?: WorktreeLayout): Promise<boolean> {
  refuseUnremovable(entry)
  if (!pathExists(entry.path)) return false
  const dotGit = join(entry.path, '.git')
  if (!isLinkedCheckout(dotGit)) {
    throw new IllegalStateError(
      `${entry.path} is no longer the worktree git registered (its .git changed): left alone`,
      undefined,
      'NOT_A_WORKTREE',
    )
  }
  if (layout) await removeLayout(entry.path, layout)
  // Emptied relative to the folder as opened (docs/security.md, "Containment"): a folder swapped for a
  // symlink mid-removal is removed as a link, and nothing outside is touched. Asynchronous: a batch deletes
  // several folders at once, and node's thread pool waits on the file system for them in parallel.
  await emptyDirHeld(entry.path, ['.git'])
  await unlinkAsync(dotGit)
  await removeEmptyDirAsync(entry.path)
  return true
}

/**
 * Deletes a proven layout's files, then its folders deepest first, as far as it can; anything it cannot delete
 * (a file that appeared, a folder no longer empty, a folder that is no longer one) is left for the caller's
 * walk of the folder. Each folder, and every folder above it, is checked to be a real folder right before its
 * own files go: each folder is opened level by level without following a link, and its files are unlinked
 * relative to that open folder (disk/door.ts's HeldDir), so a folder swapped for a link meanwhile is not
 * followed.
 */
async function removeLayout(root: string, layout: WorktreeLayout): Promise<void> {
  const filesByFolder = new Map<string, string[]>()
  for (const file of layout.files) {
    const folder = dirname(file)
    filesByFolder.set(folder, [...(filesByFolder.get(folder) ?? []), file])
  }
  for (const [folder, files] of filesByFolder) {
    const held = openHeldFolder(root, folder)
    if (!held) return
    try {
      const gone = await Promise.all(
        files.map((file) =>
          unlinkAsync(held.entry(basename(file))).then(
            () => true,
            (error: NodeJS.ErrnoException) => error.code === 'ENOENT',
          ),
        ),
      )
      if (gone.includes(false)) return
    } finally {
      held.close()
    }
  }
  // rmdir never follows a link (ENOTDIR): no check needed here.
  const deepestFirst = [...layout.dirs].sort((a, b) => b.length - a.length)
  try {
    for (const dir of deepestFirst) await removeEmptyDirAsync(join(root, dir))
  } catch {}
}

/**
 * `folder` (relative to `root`, `/`-separated as git writes paths) opened one level at a time from `root`, each
 * level without following a link; null when any level is not a real folder (the walk then decides).
 */
function openHeldFolder(root: string, folder: string): HeldDir | null {
  let held: HeldDir
  try {
    held = HeldDir.open(root)
  } catch {
    return null
  }
  if (folder === '.') return held
  for (const part of folder.split('/')) {
    let next: HeldDir
    try {
      next = held.child(part)
    } catch {
      held.close()
      return null
    }
    held.close()
    held = next
  }
  return held
}

/** A `.git` file (not a folder, not a link) naming an admin folder whose `gitdir` names this file back. */
function isLinkedCheckout(dotGit: string): boolean {
  try {
    // No-follow, type-checked: a link, folder or special file in its place is refused (false).
    const admin = /^gitdir: (.+)$/m.exec(readText(dotGit, 'small'))?.[1]?.trim()
    if (!admin) return false
    const adminDir = resolve(dirname(dotGit), admin)
    const back = resolve(adminDir, readText(join(adminDir, 'gitdir'), 'small').trim())
    // The same absolute path is the same file; only different spellings need resolving (two realpaths).
    return back === resolve(dotGit) || canonicalPath(back) === canonicalPath(dotGit)
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
  const git = gitAt(repo, options)
  const canonical = canonicalOfGone()
  const ours = new Set(removed.map(canonical))
  const listed = await listWorktrees(repo, options)
  const foreign = listed.some((w) => !w.isMain && w.prunable && !ours.has(canonical(w.path)))
  if (!foreign) {
    await git.run(['worktree', 'prune'])
    return
  }
  for (const entry of listed) {
    if (entry.isMain || entry.locked || !ours.has(canonical(entry.path))) continue
    await git.run(['worktree', 'remove', '--force', '--', entry.path])
  }
}

/**
 * `canonicalPath` for many paths whose folders were just deleted: a path that is gone is its parent's
 * canonical path and its name, and the parent (the same for a whole batch) is resolved once, not once per
 * path through a failing `realpath` each time.
 */
function canonicalOfGone(): (path: string) => string {
  const parents = new Map<string, string>()
  return (path) => {
    const abs = resolve(path)
    const parent = dirname(abs)
    if (parent === abs || entryExists(abs)) return canonicalPath(abs)
    let canonical = parents.get(parent)
    if (canonical === undefined) {
      canonical = canonicalPath(parent)
      parents.set(parent, canonical)
    }
    return join(canonical, basename(abs))
  }
}
