import { pathExists } from '../disk/door.js'
import { IllegalStateError } from '../errors.js'
import { resolveCommit } from './common.js'
import { type GitEnvOptions, gitAt } from './git.js'
import { type WorktreeState, writeWorktreeTree } from './snapshot.js'

export type DiffMode = 'patch' | 'stat' | 'name-only'

export interface DiffOptions extends GitEnvOptions {
  /** The session's worktree; when it exists, uncommitted and untracked files count too. */
  worktreeDir?: string
  /** Any directory of the repository (used when the worktree is gone). */
  repoDir: string
  /** What to compare against: the recorded base commit (a moving branch name would show others' work). */
  base: string
  /** The session's branch, diffed when the worktree no longer exists. */
  branch?: string
  mode: DiffMode
}

const MODE_ARGS: Record<DiffMode, string[]> = {
  patch: ['--patch'],
  stat: ['--stat'],
  'name-only': ['--name-only'],
}

export interface DiffReport {
  /** What was compared against the base: the worktree's files, or (its worktree gone) the branch's commits. */
  source: 'worktree' | 'branch'
  /** The base commit, resolved. */
  base: string
  /** Sorted changed paths. */
  files: string[]
  /** git's text in the requested mode ('' for name-only: see `files`). */
  text: string
}

/**
 * Everything the session changed against `base`: with a worktree, its committed work plus uncommitted and
 * untracked (not ignored) files, through a temporary-index tree; without one, `base..branch`. With git's text
 * in the requested mode, where the changes came from and the changed paths, from one snapshot of the worktree.
 */
export async function diffReport(options: DiffOptions): Promise<DiffReport> {
  const { base, target, cwd, source } = await diffEnds(options)
  const files = await changedPaths(cwd, base, target, options)
  if (options.mode === 'name-only') return { source, base, files, text: '' }
  const args = [
    'diff',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    ...MODE_ARGS[options.mode],
    base,
    target,
    '--',
  ]
  return { source, base, files, text: (await gitAt(cwd, options).run(args)).stdout }
}

/**
 * Sorted paths changed against `base` by commits, uncommitted edits and untracked files of the worktree.
 * `state`: the worktree as already read (its tree, HEAD and HEAD's tree); when HEAD is still `base` and the
 * tree is HEAD's, nothing changed and no `git diff` runs.
 */
export async function filesModified(
  worktreeDir: string,
  base: string,
  options: GitEnvOptions,
  state?: WorktreeState,
): Promise<ChangedFiles> {
  const [baseCommit, { tree, topLevel }] = await Promise.all([
    // A full commit id (what a record holds) needs no lookup: `git diff` fails on one that is gone.
    /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(base) ? base : resolveCommit(worktreeDir, base, options),
    state ?? writeWorktreeTree(worktreeDir, options),
  ])
  if (state && state.head === baseCommit && state.headTree === tree)
    return { files: [], added: [], deleted: [] }
  return changedPathKinds(topLevel, baseCommit, tree, options)
}

/** The sorted changed paths, and which of them were added and which deleted (the rest were modified). */
export interface ChangedFiles {
  files: string[]
  added: string[]
  deleted: string[]
}

async function changedPathKinds(
  cwd: string,
  base: string,
  target: string,
  options: GitEnvOptions,
): Promise<ChangedFiles> {
  // "<status letter>" then "<path>", each ending in NUL; no rename pairing, as in changedPaths.
  const fields = await gitAt(cwd, options).fields([
    'diff',
    '--name-status',
    '-z',
    '--no-renames',
    base,
    target,
    '--',
  ])
  const kinds = new Map<string, string>()
  for (let i = 0; i + 1 < fields.length; i += 2)
    kinds.set(fields[i + 1] as string, (fields[i] as string).charAt(0))
  const files = [...kinds.keys()].sort()
  return {
    files,
    added: files.filter((file) => kinds.get(file) === 'A'),
    deleted: files.filter((file) => kinds.get(file) === 'D'),
  }
}

async function diffEnds(
  options: DiffOptions,
): Promise<{ base: string; target: string; cwd: string; source: DiffReport['source'] }> {
  const base = await resolveCommit(options.repoDir, options.base, options)
  if (options.worktreeDir && pathExists(options.worktreeDir)) {
    const { tree, topLevel } = await writeWorktreeTree(options.worktreeDir, options)
    return { base, target: tree, cwd: topLevel, source: 'worktree' }
  }
  if (options.branch) {
    return {
      base,
      target: await resolveCommit(options.repoDir, options.branch, options),
      cwd: options.repoDir,
      source: 'branch',
    }
  }
  throw new IllegalStateError(
    'nothing to compare: the worktree is gone and there is no branch',
    undefined,
    'NOTHING_TO_DIFF',
  )
}

async function changedPaths(
  cwd: string,
  base: string,
  target: string,
  options: GitEnvOptions,
): Promise<string[]> {
  // No rename pairing: a renamed file changed both its old and its new path.
  const args = ['diff', '--name-only', '-z', '--no-renames', base, target, '--']
  return [...new Set(await gitAt(cwd, options).fields(args))].sort()
}

export interface FileChange {
  path: string
  /** Lines added and deleted; null for a binary file. */
  added: number | null
  deleted: number | null
}

export interface DiffSummary {
  source: DiffReport['source']
  base: string
  /** Every changed path with its +/- counts, sorted by path. */
  files: FileChange[]
  /** `git diff --stat`. */
  stat: string
}

/** The changed files with their line counts and git's `--stat`, from one snapshot of the worktree. */
export async function diffSummary(options: Omit<DiffOptions, 'mode'>): Promise<DiffSummary> {
  const { base, target, cwd, source } = await diffEnds({ ...options, mode: 'stat' })
  const common = ['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames']
  const git = gitAt(cwd, options)
  const numstat = await git.fields([...common, '--numstat', '-z', base, target, '--'])
  const stat = await git.run([...common, '--stat', base, target, '--'])
  const files: FileChange[] = []
  // Without renames each entry is "<added>\t<deleted>\t<path>" ending in NUL ("-" counts: binary).
  for (const entry of numstat) {
    const match = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(entry)
    if (!match) continue
    const count = (text: string | undefined) => (text === undefined || text === '-' ? null : Number(text))
    files.push({ path: match[3] as string, added: count(match[1]), deleted: count(match[2]) })
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return { source, base, files, stat: stat.stdout }
}
