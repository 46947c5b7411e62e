import { samePath } from './common.js'
import { type GitEnvOptions, gitAt } from './git.js'

export interface WorktreeInfo {
  path: string
  /** Null for a bare main repository or a worktree on an unborn branch. */
  head: string | null
  /** Short branch name, null when detached or bare. */
  branch: string | null
  isMain: boolean
  bare: boolean
  detached: boolean
  locked: boolean
  lockedReason?: string
  /** Its directory is gone; `git worktree prune` would drop the entry. */
  prunable: boolean
  prunableReason?: string
}

/** `git worktree list --porcelain -z`, main worktree first. */
export async function listWorktrees(repo: string, options: GitEnvOptions): Promise<WorktreeInfo[]> {
  const git = gitAt(repo, options)
  const result = await git.try(['worktree', 'list', '--porcelain', '-z'])
  if (result.exitCode === 0) return parseWorktreeList(result.stdout)
  // `-z` needs git 2.36; older ones separate fields by newlines (a path holding one cannot be parsed there).
  const plain = await git.run(['worktree', 'list', '--porcelain'])
  return parseWorktreeList(plain.stdout, '\n')
}

export function parseWorktreeList(stdout: string, separator = '\0'): WorktreeInfo[] {
  const worktrees: WorktreeInfo[] = []
  let current: WorktreeInfo | undefined
  // Records are runs of terminated fields separated by an empty field.
  for (const field of stdout.split(separator)) {
    if (field === '') {
      current = undefined
      continue
    }
    const space = field.indexOf(' ')
    const key = space < 0 ? field : field.slice(0, space)
    const value = space < 0 ? undefined : field.slice(space + 1)
    if (key === 'worktree') {
      current = {
        path: value ?? '',
        head: null,
        branch: null,
        isMain: worktrees.length === 0,
        bare: false,
        detached: false,
        locked: false,
        prunable: false,
      }
      worktrees.push(current)
      continue
    }
    if (!current) continue
    if (key === 'HEAD') current.head = value && !/^0+$/.test(value) ? value : null
    else if (key === 'branch') current.branch = value?.replace(/^refs\/heads\//, '') ?? null
    else if (key === 'bare') current.bare = true
    else if (key === 'detached') current.detached = true
    else if (key === 'locked') {
      current.locked = true
      if (value) current.lockedReason = value
    } else if (key === 'prunable') {
      current.prunable = true
      if (value) current.prunableReason = value
    }
  }
  return worktrees
}

/** The registered worktree at `path`, if any. */
export async function findWorktree(
  repo: string,
  path: string,
  options: GitEnvOptions,
): Promise<WorktreeInfo | undefined> {
  return (await listWorktrees(repo, options)).find((worktree) => samePath(worktree.path, path))
}
