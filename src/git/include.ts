import { dirname, join } from 'node:path'
import { copyFileNew, ensureDir, lstatPath, type Stats, statPath } from '../disk/door.js'
import { UsageError } from '../errors.js'
import { type GitEnvOptions, gitAt } from './git.js'

export interface CopyIncludedResult {
  /** Paths (relative, '/'-separated) copied into the new worktree. */
  copied: string[]
  /** Matching paths left alone because the worktree already has something there (or a symlink on the way). */
  skipped: string[]
}

/**
 * Copies untracked files (ignored or not, e.g. `.env`) that match `globs` from the checkout at `fromDir` into
 * the worktree at `toDir`. Matching is git's own `:(glob)` pathspec magic, relative to the top of `fromDir`:
 * `*` stays within one directory, `**` crosses them. Nothing in `toDir` is ever overwritten.
 */
export async function copyIncludedFiles(
  fromDir: string,
  toDir: string,
  globs: string[],
  options: GitEnvOptions,
): Promise<CopyIncludedResult> {
  const patterns = globs.filter((glob) => glob.trim() !== '')
  for (const glob of patterns) assertRelativeGlob(glob)
  if (patterns.length === 0) return { copied: [], skipped: [] }
  const top = await gitAt(fromDir, options).text(['rev-parse', '--show-toplevel'])
  // `--others` without exclude rules lists untracked files whether ignored or not, in one walk.
  const listed = await gitAt(top, options).fields([
    'ls-files',
    '-z',
    '--others',
    '--',
    ...patterns.map((glob) => `:(top,glob)${glob}`),
  ])
  const result: CopyIncludedResult = { copied: [], skipped: [] }
  for (const path of [...new Set(listed)].sort()) {
    // Nested repositories are listed as `dir/`; they are not files to copy.
    if (path.endsWith('/')) continue
    const source = join(top, path)
    if (!statAt(source, true)?.isFile()) continue
    const target = join(toDir, path)
    if (!safeParents(toDir, path) || statAt(target, false) !== null) {
      result.skipped.push(path)
      continue
    }
    ensureDir(dirname(target), 0o777)
    try {
      // EXCL: a file that appeared meanwhile is still never overwritten.
      copyFileNew(source, target)
      result.copied.push(path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      result.skipped.push(path)
    }
  }
  return result
}

function assertRelativeGlob(glob: string): void {
  if (glob.startsWith('/') || glob.split('/').includes('..') || glob.includes('\0')) {
    throw new UsageError(
      `invalid include pattern "${glob}": must be relative to the repository and stay inside it`,
      undefined,
      'INVALID_INCLUDE',
    )
  }
}

/** What is at `path` (a link itself unless `follow`), or null when nothing can be found there. */
function statAt(path: string, follow: boolean): Stats | null {
  try {
    return follow ? statPath(path) : lstatPath(path)
  } catch {
    return null
  }
}

/** Every existing ancestor of `rel` inside `root` is a real directory: a symlink could lead outside. */
function safeParents(root: string, rel: string): boolean {
  let dir = root
  for (const part of rel.split('/').slice(0, -1)) {
    dir = join(dir, part)
    const stat = statAt(dir, false)
    if (!stat) return true
    if (!stat.isDirectory() || stat.isSymbolicLink()) return false
  }
  return true
}
