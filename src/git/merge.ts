import { IllegalStateError } from '../errors.js'
import { assertRefArg } from './common.js'
import { type GitEnvOptions, gitAt, gitDetail, gitFailed, splitZ } from './git.js'
import { reflogLine } from './refs.js'
import { commitTree, identityEnv, writeWorktreeTree } from './snapshot.js'
import { statusEntries } from './worktree.js'
import { listWorktrees } from './worktree-list.js'

/**
 * Landing a session's branch on its base branch (docs/continuity.md, "Merge"). Conflicts are found with
 * `git merge-tree --write-tree`, which touches no worktree; the main worktree only ever moves by a
 * fast-forward to a commit made beforehand, so a refused or failed merge leaves it exactly as it was.
 */

export interface MainWorktree {
  path: string
  /** The branch checked out there, null when detached. */
  branch: string | null
}

/** The repository's main worktree (where the base branch is checked out). */
export async function mainWorktree(repo: string, options: GitEnvOptions): Promise<MainWorktree> {
  const main = (await listWorktrees(repo, options))[0]
  if (!main?.isMain || main.bare) {
    throw new IllegalStateError(
      `the repository ${repo} has no main worktree to merge into`,
      undefined,
      'NO_MAIN_WORKTREE',
    )
  }
  return { path: main.path, branch: main.detached ? null : main.branch }
}

/**
 * Tracked changes (staged or not) in a worktree. Untracked files do not block a merge: the fast-forward
 * refuses, changing nothing, when it would overwrite one.
 */
export async function trackedChanges(dir: string, options: GitEnvOptions): Promise<string[]> {
  const args = ['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=no']
  return statusEntries((await gitAt(dir, options).run(args)).stdout).map((entry) => entry.slice(3))
}

export interface PendingWork {
  /** A commit of the worktree's files on its HEAD (not on any branch): what committing them would give. */
  commit: string
  head: string
  /** Paths that differ from HEAD. */
  files: string[]
}

/**
 * What committing a worktree's uncommitted work (tracked changes and untracked files, not ignored ones) would
 * give, made through a temporary index: the worktree is not touched. Null when there is nothing to commit.
 */
export async function pendingWork(
  worktreeDir: string,
  message: string,
  options: GitEnvOptions,
): Promise<PendingWork | null> {
  const { tree, head, topLevel } = await writeWorktreeTree(worktreeDir, options)
  if (!head) return null
  const files = await gitAt(topLevel, options).fields([
    'diff-tree',
    '-r',
    '--no-renames',
    '--name-only',
    '-z',
    head,
    tree,
  ])
  if (files.length === 0) return null
  const commit = await commitTree(topLevel, tree, [head], message, options)
  return { commit, head, files }
}

/**
 * Makes a commit prepared by `pendingWork` the worktree's HEAD (its branch moves, with a reflog entry) and
 * resets the index to it; the files already are what it holds. Refused when HEAD moved meanwhile.
 */
export async function commitPendingWork(
  worktreeDir: string,
  work: PendingWork,
  message: string,
  options: GitEnvOptions,
): Promise<void> {
  const git = gitAt(worktreeDir, options)
  const moved = await git.try([
    'update-ref',
    '-m',
    reflogLine(message, 'harness merge'),
    'HEAD',
    work.commit,
    work.head,
  ])
  if (moved.exitCode !== 0) {
    throw new IllegalStateError(
      `could not commit the work in ${worktreeDir}: ${gitDetail(moved)}`,
      'something changed its branch meanwhile; run the merge again',
      'BRANCH_MOVED',
    )
  }
  await git.run(['reset', '-q'])
}

export interface MergeCheck {
  /** The merged tree (also written when there are conflicts: then it holds conflict markers). */
  tree: string
  /** Paths with conflicts, empty for a clean merge. */
  conflicts: string[]
}

/** `git merge-tree --write-tree`: the result of merging `theirs` into `ours`, without touching any worktree. */
export async function checkMerge(
  repo: string,
  ours: string,
  theirs: string,
  options: GitEnvOptions,
): Promise<MergeCheck> {
  assertRefArg(ours, 'commit')
  assertRefArg(theirs, 'commit')
  const args = ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs]
  const result = await gitAt(repo, options).try(args)
  // Exit 1 means conflicts; anything else is git failing (or too old for --write-tree: git 2.38).
  if (result.exitCode !== 0 && result.exitCode !== 1) {
    throw gitFailed(args, result, 'merging needs git 2.38 or newer')
  }
  const [tree = '', ...rest] = splitZ(result.stdout)
  const conflicts = result.exitCode === 1 ? [...new Set(rest.filter((path) => path !== ''))] : []
  return { tree, conflicts }
}

export type RebaseResult = { ok: true; head: string } | { ok: false; conflicts: string[] }

/**
 * Replays the worktree's branch onto `onto` (`git rebase`). On a conflict the rebase is aborted, so the
 * branch and the files are as they were, and the conflicting paths are returned.
 */
export async function rebaseOnto(
  worktreeDir: string,
  onto: string,
  options: GitEnvOptions,
): Promise<RebaseResult> {
  assertRefArg(onto, 'commit')
  const git = gitAt(worktreeDir, options)
  const rebase = ['rebase', '-q', '--no-autostash', onto]
  const rebased = await git.with(await identityEnv(worktreeDir, options)).try(rebase)
  if (rebased.exitCode === 0) return { ok: true, head: await git.text(['rev-parse', 'HEAD']) }
  const unmerged = await git.try(['diff', '--name-only', '-z', '--diff-filter=U'])
  const abort = ['rebase', '--abort']
  const aborted = await git.try(abort)
  const conflicts = unmerged.exitCode === 0 ? splitZ(unmerged.stdout) : []
  if (aborted.exitCode !== 0) throw gitFailed(abort, aborted)
  if (conflicts.length === 0) throw gitFailed(rebase, rebased)
  return { ok: false, conflicts }
}

/**
 * Moves the branch checked out in `dir` to `commit` by a fast-forward (`git merge --ff-only`): git checks
 * first and changes nothing when it cannot (the branch moved meanwhile, an untracked file in the way).
 */
export async function fastForward(
  dir: string,
  commit: string,
  message: string,
  options: GitEnvOptions,
): Promise<void> {
  assertRefArg(commit, 'commit')
  const result = await gitAt(dir, options)
    .with({ GIT_REFLOG_ACTION: reflogLine(message, 'harness merge') })
    .try(['merge', '--ff-only', '-q', '--no-stat', commit])
  if (result.exitCode === 0) return
  throw new IllegalStateError(
    `could not update ${dir}: ${gitDetail(result)}`,
    'nothing was changed there; fix what git names and run the merge again',
    'MERGE_FAILED',
  )
}
