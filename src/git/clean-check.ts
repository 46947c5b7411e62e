import { isAbsolute, join, resolve } from 'node:path'
import { type BigIntStats, type Dirent, lstatBig, readBytes, readDirEntries, readText } from '../disk/door.js'
import { type GitEnvOptions, gitAt } from './git.js'
import { type IndexEntry, type ParsedIndex, parseIndex } from './index-file.js'

/**
 * An in-process proof that a worktree is clean in the sense of `cleanWorktrees` (docs/development/design.md,
 * "Removal"): `git status --porcelain --untracked-files=all --ignore-submodules=none` would print nothing and
 * no index entry hides edits or is a submodule. It reads what git reads — the worktree's index file, its stat
 * data and the folder — and compares what git compares; anything it is not sure of (an index format or flag
 * it does not read, a racily clean entry, a file git would have to open, any path not in the index, which
 * only git's ignore rules can judge) is "not proven", and git is asked as before. It never says "dirty".
 */

const REGULAR = 0o100644
const EXECUTABLE = 0o100755
const SYMLINK = 0o120000

/**
 * What a worktree proven clean held when it was proven: its files and the folders leading to them (paths
 * relative to it, `.git` aside). A removal deletes these by name instead of walking the folder again.
 */
export interface WorktreeLayout {
  files: string[]
  dirs: string[]
}

/**
 * Whether every entry is one git's status would pass on its stat data alone, and the folder holds exactly
 * the index's files: the layout proven, or null. `indexMtimeSec` is the index file's mtime in whole seconds:
 * an entry modified in that second or later is racily clean, and git would compare its content (the seconds
 * rule is the stricter of git's two builds, with and without nanosecond timestamps).
 */
export function provenLayout(dir: string, index: ParsedIndex, indexMtimeSec: bigint): WorktreeLayout | null {
  const files = new Set<string>()
  const dirs = new Set<string>()
  for (const entry of index.entries) {
    // Any flag (assume-unchanged, skip-worktree, intent-to-add), a conflict stage, a submodule or an odd
    // path needs git.
    if ((entry.flags & 0xf000) !== 0 || entry.extendedFlags !== 0) return null
    if (entry.mode !== REGULAR && entry.mode !== EXECUTABLE && entry.mode !== SYMLINK) return null
    if (!plainPath(entry.path) || files.has(entry.path)) return null
    if (BigInt(entry.mtimeSec) >= (indexMtimeSec & 0xffffffffn)) return null
    let st: BigIntStats
    try {
      st = lstatBig(join(dir, entry.path))
    } catch {
      return null
    }
    if (!statMatches(entry, st)) return null
    files.add(entry.path)
    for (let slash = entry.path.indexOf('/'); slash > 0; slash = entry.path.indexOf('/', slash + 1)) {
      dirs.add(entry.path.slice(0, slash))
    }
  }
  return folderHoldsOnly(dir, files, dirs) ? { files: [...files], dirs: [...dirs] } : null
}

function plainPath(path: string): boolean {
  if (path === '' || path.includes('\uFFFD') || path.includes('\\')) return false
  return path.split('/').every((part) => part !== '' && part !== '.' && part !== '..' && part !== '.git')
}

const NS = 1_000_000_000n
const LOW32 = 0xffffffffn

/** git's `ce_match_stat_basic` with every check on: times to the nanosecond, device, inode, owner, size, mode. */
function statMatches(entry: IndexEntry, st: BigIntStats): boolean {
  const type = st.isSymbolicLink()
    ? SYMLINK
    : st.isFile()
      ? (st.mode & 0o100n) !== 0n
        ? EXECUTABLE
        : REGULAR
      : 0
  return (
    type === entry.mode &&
    ((st.ctimeNs / NS) & LOW32) === BigInt(entry.ctimeSec) &&
    st.ctimeNs % NS === BigInt(entry.ctimeNsec) &&
    ((st.mtimeNs / NS) & LOW32) === BigInt(entry.mtimeSec) &&
    st.mtimeNs % NS === BigInt(entry.mtimeNsec) &&
    (st.dev & LOW32) === BigInt(entry.dev) &&
    (st.ino & LOW32) === BigInt(entry.ino) &&
    (st.uid & LOW32) === BigInt(entry.uid) &&
    (st.gid & LOW32) === BigInt(entry.gid) &&
    (st.size & LOW32) === BigInt(entry.size)
  )
}

/**
 * The folder holds the index's files and the folders leading to them, and nothing else: any other name is
 * untracked or ignored (only git knows which) or an empty folder, and git is asked. The top `.git` is skipped.
 */
function folderHoldsOnly(dir: string, files: Set<string>, dirs: Set<string>): boolean {
  let seen = 0
  const pending = ['']
  for (let rel = pending.pop(); rel !== undefined; rel = pending.pop()) {
    let names: Dirent[]
    try {
      names = readDirEntries(rel === '' ? dir : join(dir, rel))
    } catch {
      return false
    }
    for (const dirent of names) {
      if (rel === '' && dirent.name === '.git') continue
      const path = rel === '' ? dirent.name : `${rel}/${dirent.name}`
      if (dirent.isDirectory()) {
        if (!dirs.has(path)) return false
        pending.push(path)
      } else if (files.has(path)) {
        seen++
      } else {
        return false
      }
    }
  }
  return seen === files.size
}

/** A linked worktree's git dir, from the `gitdir:` line of its `.git` file; null for anything else. */
function linkedGitDir(worktree: string): string | null {
  let text: string
  try {
    // No-follow and type-checked: a link or anything but a plain file is refused (and then null).
    text = readText(join(worktree, '.git'), 'small')
  } catch {
    return null
  }
  const match = /^gitdir: (.+)\n?$/.exec(text)
  if (!match?.[1]) return null
  return isAbsolute(match[1]) ? match[1] : resolve(worktree, match[1])
}

/** What `HEAD` names as a revision whose tree git can look up: a branch's full ref or a commit id. */
function headRevision(gitDir: string): string | null {
  let text: string
  try {
    text = readText(join(gitDir, 'HEAD'), 'small')
  } catch {
    return null
  }
  const ref = /^ref: (refs\/heads\/[^\s^~:?*[\\]+)\n?$/.exec(text)
  if (ref?.[1]) return ref[1]
  const detached = /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.exec(text)
  return detached?.[1] ?? null
}

/**
 * The worktrees of `paths` proven clean in process: HEAD's tree (one `git cat-file` for all of them) equals
 * the index's cache-tree root covering every entry (no staged change), every entry passes on its stat data
 * and is not racily clean (no unstaged change), and the folder holds nothing else (no untracked file).
 */
export async function provenCleanWorktrees(
  repo: string,
  paths: string[],
  options: GitEnvOptions,
  /** Given, receives the layout of each worktree proven clean. */
  layouts?: Map<string, WorktreeLayout>,
  /**
   * Told of each worktree as soon as it is proven, so that the caller's work on it (deleting it) overlaps
   * with the proofs of the rest: the proofs yield to the event loop every few worktrees for that.
   */
  onProven?: (path: string) => void,
): Promise<Set<string>> {
  const proven = new Set<string>()
  const candidates: { path: string; gitDir: string; revision: string }[] = []
  for (const path of paths) {
    const gitDir = linkedGitDir(path)
    const revision = gitDir === null ? null : headRevision(gitDir)
    if (gitDir !== null && revision !== null) candidates.push({ path, gitDir, revision })
  }
  if (candidates.length === 0) return proven
  const revisions = [...new Set(candidates.map((c) => c.revision))]
  const looked = await gitAt(repo, options).try(['cat-file', '--batch-check=%(objectname)'], {
    input: revisions.map((revision) => `${revision}^{tree}\n`).join(''),
  })
  if (looked.exitCode !== 0) return proven
  const lines = looked.stdout.split('\n')
  const trees = new Map<string, string>()
  revisions.forEach((revision, i) => {
    const tree = lines[i] ?? ''
    if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(tree)) trees.set(revision, tree)
  })
  for (const [i, { path, gitDir, revision }] of candidates.entries()) {
    if (onProven && i % YIELD_EVERY === YIELD_EVERY - 1) await new Promise((resolve) => setImmediate(resolve))
    const tree = trees.get(revision)
    const layout = tree === undefined ? null : worktreeProvenClean(path, gitDir, tree)
    if (layout === null) continue
    proven.add(path)
    layouts?.set(path, layout)
    onProven?.(path)
  }
  return proven
}

/** How many worktrees are proven (synchronous file reads) between two turns of the event loop. */
const YIELD_EVERY = 8

function worktreeProvenClean(path: string, gitDir: string, headTree: string): WorktreeLayout | null {
  const indexFile = join(gitDir, 'index')
  let buffer: Buffer
  let indexMtimeSec: bigint
  try {
    // The index's mtime is read before its content: a rewrite in between only makes the racy rule stricter.
    indexMtimeSec = lstatBig(indexFile).mtimeNs / NS
    buffer = readBytes(indexFile, 'gitIndex')
  } catch {
    return null
  }
  const index = parseIndex(buffer, headTree.length / 2)
  if (index === null || index.root === null) return null
  if (index.root.oid !== headTree || index.root.entries !== index.entries.length) return null
  return provenLayout(path, index, indexMtimeSec)
}
