import { join, resolve } from 'node:path'
import { ensureDir, listDir, pathExists, removeHeldSync, statPath } from '../disk/door.js'
import { ExternalToolError, IllegalStateError } from '../errors.js'
import { provenCleanWorktrees } from './clean-check.js'
import { assertBranchName, resolveCommit, samePath } from './common.js'
import { type Git, type GitEnvOptions, gitAt, gitFailed, splitZ } from './git.js'
import { branchTip, deleteBranch } from './repo.js'
import { findWorktree, listWorktrees, type WorktreeInfo } from './worktree-list.js'

export { resolveCommit } from './common.js'
export { type CopyIncludedResult, copyIncludedFiles } from './include.js'
export { deleteBranch } from './repo.js'
export { findWorktree, listWorktrees, parseWorktreeList, type WorktreeInfo } from './worktree-list.js'

export interface CreateWorktreeOptions extends GitEnvOptions {
  /** Any directory of the repository. */
  repoDir: string
  /** Where the worktree goes; must not exist, or be an empty directory. */
  path: string
  /** The new branch; an existing branch of that name is an error, never reused. */
  branch: string
  /** Revision to start from (a user-supplied ref is fine: it is validated). */
  base: string
  /** `base` is a full commit id the caller has just resolved: not asked of git again. */
  verifiedBase?: boolean
  /**
   * Aborting rolls back everything this call made. A git step that is already running is allowed to end
   * first (killing git mid-checkout could leave its child processes writing), so the rollback is complete.
   */
  signal?: AbortSignal
}

export interface CreatedWorktree {
  path: string
  branch: string
  /** The commit the branch was created at. */
  base: string
}

/**
 * Creates branch `branch` at `base` and checks it out in a new worktree at `path`. On failure or abort,
 * removes exactly what this call created (the worktree, its directory, the branch while it still points at
 * `base`) and rethrows.
 */
export async function createWorktree(options: CreateWorktreeOptions): Promise<CreatedWorktree> {
  const { repoDir, branch, signal } = options
  const { git, gitOptions, path } = startWorktree(options)
  // A branch or registration already there is found by the steps themselves (the branch is created
  // atomically, and `git worktree add` refuses a registered path): no git process is spent checking first.
  const [base] = await Promise.all([
    options.verifiedBase ? options.base : resolveCommit(repoDir, options.base, gitOptions),
    assertBranchName(repoDir, branch, gitOptions),
  ])
  const pathWasEmptyDir = checkTargetPath(path)
  signal?.throwIfAborted()

  let branchCreated = false
  try {
    // Creating the branch with an empty old value is atomic and fails if it exists: a branch that appears
    // concurrently is never mistaken for ours and deleted on rollback.
    const create = [
      'update-ref',
      '--create-reflog',
      '-m',
      `branch: Created from ${base}`,
      `refs/heads/${branch}`,
      base,
      '',
    ]
    const created = await git.try(create)
    if (created.exitCode !== 0) {
      if (!/already exists|cannot lock ref/.test(created.stderr)) throw gitFailed(create, created)
      throw new IllegalStateError(
        `branch "${branch}" already exists`,
        `choose another name, or look at it with "git log ${branch}" before deleting it`,
        'BRANCH_EXISTS',
      )
    }
    branchCreated = true
    signal?.throwIfAborted()
    const add = ['worktree', 'add', '--', path, branch]
    const added = await git.try(add)
    signal?.throwIfAborted()
    if (added.exitCode !== 0) {
      if (/already registered/.test(added.stderr)) {
        throw new IllegalStateError(
          `a worktree is already registered at ${path}`,
          'run "git worktree prune" if its directory was deleted',
          'WORKTREE_EXISTS',
        )
      }
      throw gitFailed(add, added)
    }
    return { path, branch, base }
  } catch (error) {
    // Nothing was made yet: the path and the branch, if they exist, are someone else's.
    if (!branchCreated) throw error
    const leftovers = await rollbackWorktree(git, path, pathWasEmptyDir, branch, base)
    throw rollbackError(error, leftovers)
  }
}

function rollbackError(error: unknown, leftovers: string[]): unknown {
  if (leftovers.length === 0) return error
  const reason = error instanceof Error ? error.message : String(error)
  return new ExternalToolError(
    `creating the worktree failed (${reason}) and could not be fully undone: ${leftovers.join('; ')}`,
    'a branch that moved may hold work: check with "git worktree list" and "git log <branch>" first',
    'WORKTREE_ROLLBACK_FAILED',
    error,
  )
}

export interface RecreateWorktreeOptions extends GitEnvOptions {
  repoDir: string
  path: string
  /** An existing branch, checked out as it is. */
  branch: string
  signal?: AbortSignal
}

/**
 * Checks an existing branch out again in a worktree at `path` (a session whose worktree was removed). A stale
 * registration left at that path by a deleted directory is dropped first. On failure or abort only the
 * worktree is removed; the branch is never touched.
 */
export async function recreateWorktree(options: RecreateWorktreeOptions): Promise<CreatedWorktree> {
  const { repoDir, branch, signal } = options
  const { git, gitOptions, path } = startWorktree(options)
  await assertBranchName(repoDir, branch, gitOptions)
  const tip = await branchTip(repoDir, branch, gitOptions)
  if (tip === null) {
    throw new IllegalStateError(
      `branch "${branch}" does not exist`,
      'its work cannot be checked out again',
      'BRANCH_MISSING',
    )
  }
  const pathWasEmptyDir = checkTargetPath(path)
  for (const worktree of await listWorktrees(repoDir, gitOptions)) {
    const here = samePath(worktree.path, path)
    if (here && pathExists(worktree.path)) {
      throw new IllegalStateError(`a worktree is already registered at ${path}`, undefined, 'WORKTREE_EXISTS')
    }
    if (here) {
      // Its directory is gone: only the registration is left, and it would block checking the branch out.
      await git.run(['worktree', 'remove', '--force', '--force', '--', worktree.path])
    } else if (worktree.branch === branch) {
      throw new IllegalStateError(
        `branch "${branch}" is checked out in ${worktree.path}`,
        'work there, or remove that worktree first',
        'BRANCH_CHECKED_OUT',
      )
    }
  }
  signal?.throwIfAborted()
  try {
    await git.run(['worktree', 'add', '--', path, branch])
    signal?.throwIfAborted()
    return { path, branch, base: tip }
  } catch (error) {
    const leftovers = await rollbackWorktree(git, path, pathWasEmptyDir, null, tip)
    throw rollbackError(error, leftovers)
  }
}

/** Where creating a worktree starts: git in the repository, without the caller's abort signal. */
function startWorktree(options: GitEnvOptions & { repoDir: string; path: string; signal?: AbortSignal }) {
  options.signal?.throwIfAborted()
  // The caller's signal must not reach git: a killed git step could not be rolled back reliably.
  const gitOptions: GitEnvOptions = { env: options.env }
  return { git: gitAt(options.repoDir, gitOptions), gitOptions, path: resolve(options.path) }
}

/** Refuses a path that holds anything; returns whether it is an existing (empty) directory. */
function checkTargetPath(path: string): boolean {
  if (!pathExists(path)) return false
  if (statPath(path).isDirectory() && listDir(path).length === 0) return true
  throw new IllegalStateError(
    `${path} already exists`,
    'remove it or choose another location for the worktree',
    'WORKTREE_PATH_EXISTS',
  )
}

/** Best effort; returns what could not be removed. Never uses the caller's abort signal. */
async function rollbackWorktree(
  git: Git,
  path: string,
  keepEmptyDir: boolean,
  branch: string | null,
  base: string,
): Promise<string[]> {
  const repoDir = git.cwd
  const options: GitEnvOptions = git
  const leftovers: string[] = []
  try {
    // A worktree registered there on another branch was made by someone else meanwhile: leave it alone.
    const registered = await findWorktree(repoDir, path, options)
    if (registered && branch !== null && registered.branch !== null && registered.branch !== branch) {
      return [`worktree ${path} (registered by another command on ${registered.branch})`]
    }
    // Twice forced: git locks a worktree while it is being set up, and an interrupted add leaves the lock.
    if (registered) await git.try(['worktree', 'remove', '--force', '--force', '--', path])
    // The path was absent or empty before this call, so anything in it now was made by this call.
    // Held while emptied: a folder swapped for a link meanwhile is removed as a link, nothing outside.
    removeHeldSync(path)
    if (keepEmptyDir) ensureDir(path, 0o777)
    // With the directory gone, remove drops a registration that survived the first attempt.
    if (await findWorktree(repoDir, path, options)) {
      await git.try(['worktree', 'remove', '--force', '--force', '--', path])
      if (await findWorktree(repoDir, path, options)) leftovers.push(`worktree registration ${path}`)
    }
  } catch (error) {
    leftovers.push(`worktree ${path} (${error instanceof Error ? error.message : String(error)})`)
  }
  if (branch !== null) {
    // Compare-and-delete: if anything moved the branch meanwhile, it holds work and stays.
    const kept = await deleteBranch(repoDir, branch, base, options).then(
      () => false,
      () => true,
    )
    if (kept) leftovers.push(`branch ${branch}`)
  }
  return leftovers
}

export interface RemoveWorktreeOptions extends GitEnvOptions {
  /** Remove even with modified or untracked files (ignored files always go with the directory). */
  force?: boolean
}

/**
 * Removes the registered worktree at `path` (its branch stays). False when nothing is registered at `path`
 * and the directory does not exist; a directory that exists but is not a worktree of this repository is
 * refused, and so is a dirty one without `force` (WORKTREE_DIRTY).
 */
export async function removeWorktree(
  repo: string,
  path: string,
  options: RemoveWorktreeOptions,
): Promise<boolean> {
  const target = resolve(path)
  const entry = await findWorktree(repo, target, options)
  if (!entry) {
    if (!pathExists(target)) return false
    throw new IllegalStateError(
      `${target} is not a worktree of this repository`,
      'it was left untouched',
      'NOT_A_WORKTREE',
    )
  }
  if ((await removeListedWorktree(repo, entry, options)) === 'removed') return true
  throw new IllegalStateError(
    `worktree ${target} has uncommitted changes or untracked files`,
    'commit or snapshot them first, or force the removal',
    'WORKTREE_DIRTY',
  )
}

/**
 * The one `git worktree remove`, of a worktree already looked up in `listWorktrees` (saves a listing per call
 * when removing many). Without `force` git refuses a worktree with tracked changes or untracked files that are
 * not ignored: 'dirty' is returned and nothing is touched. A registration whose folder is gone is just dropped.
 */
export async function removeListedWorktree(
  repo: string,
  entry: WorktreeInfo,
  options: RemoveWorktreeOptions,
): Promise<'removed' | 'dirty'> {
  refuseUnremovable(entry)
  const args = ['worktree', 'remove', ...(options.force ? ['--force'] : []), '--', entry.path]
  const result = await gitAt(repo, options).try(args)
  if (result.exitCode === 0) return 'removed'
  if (/modified or untracked files/.test(result.stderr)) return 'dirty'
  throw gitFailed(args, result)
}

/** No removal touches the main worktree, nor a locked one: its folder may be on a device that is not mounted. */
export function refuseUnremovable(entry: WorktreeInfo): void {
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

/**
 * `git worktree prune`: drops registrations whose directory is gone and returns git's report lines; with
 * `dryRun` only says what it would drop.
 */
export async function pruneWorktrees(
  repo: string,
  options: GitEnvOptions & { dryRun?: boolean },
): Promise<string[]> {
  const dryRun = options.dryRun ? ['--dry-run'] : []
  const result = await gitAt(repo, options).run(['worktree', 'prune', ...dryRun, '--verbose'])
  return `${result.stdout}\n${result.stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
}

/**
 * Everything a folder's removal would lose, as one status: untracked files included, and a nested repository
 * whose commit differs from the one recorded. git never looks inside a nested repository (its own config could
 * run commands: docs/security.md); one that is checked out is a reason of its own (`submodules`, NESTED_REPO).
 */
const WORKTREE_STATUS_ARGS = [
  '--no-optional-locks',
  'status',
  '--porcelain=v1',
  '-z',
  '--untracked-files=all',
  '--ignore-submodules=dirty',
]

/**
 * What removing a worktree's folder would lose, from two git processes run side by side: `changes` (porcelain
 * v1 `XY path` entries, hidden edits as `H  path`) and `submodules`, the tracked submodules that are checked
 * out (their folder holds a .git, so deleting the folder deletes that checkout).
 */
export async function inspectWorktree(
  path: string,
  options: GitEnvOptions,
): Promise<{ changes: string[]; submodules: string[] }> {
  const [status, index] = await Promise.all([
    gitAt(path, options).run(WORKTREE_STATUS_ARGS),
    indexEntries(path, options),
  ])
  const changes = statusEntries(status.stdout)
  for (const hidden of await hiddenIn(path, index, options)) changes.push(`H  ${hidden}`)
  const submodules = index
    .filter((entry) => entry.mode === '160000' && pathExists(join(path, entry.path, '.git')))
    .map((entry) => entry.path)
  return { changes, submodules }
}

/**
 * The entries (`XY path`) of `git status --porcelain=v1 -z`. A rename or copy adds its source path as an
 * extra field with no status prefix: it is skipped.
 */
export function statusEntries(stdout: string): string[] {
  const entries: string[] = []
  const fields = splitZ(stdout)
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? ''
    entries.push(field)
    if (field[0] === 'R' || field[0] === 'C') i++
  }
  return entries
}

interface IndexEntry {
  /** `ls-files -v`'s tag: lower case for assume-unchanged, S for skip-worktree. */
  tag: string
  mode: string
  hash: string
  path: string
}

/** Every index entry with its tag, mode and staged blob, from one `ls-files -v -s`. */
async function indexEntries(path: string, options: GitEnvOptions): Promise<IndexEntry[]> {
  const entries: IndexEntry[] = []
  for (const line of await gitAt(path, options).fields(['ls-files', '-v', '-s', '-z'])) {
    const match = /^(\S+) (\d+) ([0-9a-f]+) \d\t(.*)$/s.exec(line)
    if (match?.[1] && match[2] && match[3] && match[4] !== undefined) {
      entries.push({ tag: match[1], mode: match[2], hash: match[3], path: match[4] })
    }
  }
  return entries
}

/**
 * Edits `git status` cannot see: files marked assume-unchanged or skip-worktree that exist in the worktree
 * and differ from the index. (A skip-worktree file that is absent is a sparse checkout, not a change.)
 */
export async function hiddenChanges(path: string, options: GitEnvOptions): Promise<string[]> {
  return hiddenIn(path, await indexEntries(path, options), options)
}

async function hiddenIn(path: string, index: IndexEntry[], options: GitEnvOptions): Promise<string[]> {
  const staged = new Map<string, string>()
  const flagged: string[] = []
  for (const entry of index) {
    if (!/^[a-z]$/.test(entry.tag) && entry.tag !== 'S') continue
    if (entry.path.includes('\n') || !pathExists(join(path, entry.path))) continue
    flagged.push(entry.path)
    staged.set(entry.path, entry.hash)
  }
  if (flagged.length === 0) return []
  const hashed = await gitAt(path, options).lines(['hash-object', '--stdin-paths'], {
    input: `${flagged.join('\n')}\n`,
  })
  return flagged.filter((file, i) => hashed[i] !== staged.get(file))
}

/** How many worktrees one `git for-each-repo` asks about (its output is held in memory). */
const CLEAN_CHUNK = 50

/**
 * The worktrees of `paths` that `inspectWorktree` would find clean (no change, no hidden edit, no checked-out
 * submodule), asked in chunks with `git for-each-repo` (git runs status and ls-files in each worktree; two
 * processes from harness per chunk instead of two per worktree). Empty answers for a whole chunk mean every
 * worktree of it is clean; a chunk with any answer or failure is left out, to be inspected one by one.
 * Every path must be a worktree's top folder holding its `.git` (else git would answer for the folder above).
 * Worktrees proven clean in process (`provenCleanWorktrees`: index, stat data and folder read as git reads
 * them) are not asked about; git answers only for the rest. `layouts`, when given, receives what each worktree
 * proven in process held (git's answers give none).
 */
export async function cleanWorktrees(
  // provenCleanWorktrees' own parameters (`onProven` is told of each worktree proven in process).
  ...args: Parameters<typeof provenCleanWorktrees>
): Promise<Set<string>> {
  const [repo, paths, options] = args
  const git = gitAt(repo, options)
  const clean = await provenCleanWorktrees(...args)
  const usable = paths.filter((path) => !clean.has(path) && !/[\0\n\r]/.test(path))
  const chunks: string[][] = []
  for (let start = 0; start < usable.length; start += CLEAN_CHUNK) {
    chunks.push(usable.slice(start, start + CLEAN_CHUNK))
  }
  const askChunk = async (chunk: string[]) => {
    const list = chunk.flatMap((path) => ['-c', `harness.inspect=${path}`])
    const each = (args: string[]) =>
      git.try([...list, 'for-each-repo', '--config=harness.inspect', '--', ...args])
    const [status, index] = await Promise.all([
      each(WORKTREE_STATUS_ARGS),
      each(['ls-files', '-v', '-s', '-z']),
    ])
    if (status.exitCode !== 0 || index.exitCode !== 0 || status.stdout !== '') return
    // Tags in lower case (assume-unchanged) or S (skip-worktree), and gitlinks, need a closer look.
    if (splitZ(index.stdout).some((line) => /^(?:[a-z]|S) /.test(line) || /^\S+ 160000 /.test(line))) return
    for (const path of chunk) clean.add(path)
  }
  // Two chunks at a time: git's own work in each worktree is most of the time, and it can use two cores.
  let next = 0
  const worker = async () => {
    for (let i = next++; i < chunks.length; i = next++) await askChunk(chunks[i] ?? [])
  }
  await Promise.all([worker(), worker()])
  return clean
}
