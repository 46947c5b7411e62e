import { ExternalToolError, IllegalStateError } from '../errors.js'
import { assertRefArg, type GitEnvOptions, gitDetail, run, splitZ } from './common.js'
import { commitTree, identityEnv, writeWorktreeTree } from './snapshot.js'
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
  const result = await run(
    ['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=no'],
    dir,
    options,
  )
  const paths: string[] = []
  const fields = splitZ(result.stdout)
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? ''
    paths.push(field.slice(3))
    if (field[0] === 'R' || field[0] === 'C') i++
  }
  return paths
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
  const files = splitZ(
    (await run(['diff-tree', '-r', '--no-renames', '--name-only', '-z', head, tree], topLevel, options))
      .stdout,
  )
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
  const moved = await run(
    ['update-ref', '-m', firstLine(message), 'HEAD', work.commit, work.head],
    worktreeDir,
    {
      ...options,
      allowFailure: true,
    },
  )
  if (moved.exitCode !== 0) {
    throw new IllegalStateError(
      `could not commit the work in ${worktreeDir}: ${gitDetail(moved)}`,
      'something changed its branch meanwhile; run the merge again',
      'BRANCH_MOVED',
    )
  }
  await run(['reset', '-q'], worktreeDir, options)
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
  const result = await run(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', ours, theirs],
    repo,
    { ...options, allowFailure: true },
  )
  // Exit 1 means conflicts; anything else is git failing (or too old for --write-tree: git 2.38).
  if (result.exitCode !== 0 && result.exitCode !== 1) {
    throw new ExternalToolError(
      `git merge-tree failed: ${gitDetail(result)}`,
      'merging needs git 2.38 or newer',
      'GIT_FAILED',
    )
  }
  const [tree = '', ...rest] = splitZ(result.stdout)
  const conflicts = result.exitCode === 1 ? [...new Set(rest.filter((path) => path !== ''))] : []
  return { tree, conflicts }
}

/** How many commits reachable from `tip` that `base` does not contain. */
export async function commitsAhead(
  repo: string,
  tip: string,
  base: string,
  options: GitEnvOptions,
): Promise<number> {
  assertRefArg(tip, 'commit')
  assertRefArg(base, 'commit')
  return Number((await run(['rev-list', '--count', tip, '--not', base, '--'], repo, options)).stdout.trim())
}

/** A commit of `tree` on `parents` (the merge or squash commit), with harness's identity if git has none. */
export async function mergeCommit(
  repo: string,
  tree: string,
  parents: string[],
  message: string,
  options: GitEnvOptions,
): Promise<string> {
  return commitTree(repo, tree, parents, message, options)
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
  const extraEnv = await identityEnv(worktreeDir, options)
  const rebased = await run(['rebase', '-q', '--no-autostash', onto], worktreeDir, {
    ...options,
    extraEnv,
    allowFailure: true,
  })
  if (rebased.exitCode === 0) {
    return { ok: true, head: (await run(['rev-parse', 'HEAD'], worktreeDir, options)).stdout.trim() }
  }
  const unmerged = await run(['diff', '--name-only', '-z', '--diff-filter=U'], worktreeDir, {
    ...options,
    allowFailure: true,
  })
  const aborted = await run(['rebase', '--abort'], worktreeDir, { ...options, allowFailure: true })
  const conflicts = unmerged.exitCode === 0 ? splitZ(unmerged.stdout) : []
  if (conflicts.length === 0 || aborted.exitCode !== 0) {
    throw new ExternalToolError(
      `git rebase failed in ${worktreeDir}: ${gitDetail(aborted.exitCode !== 0 ? aborted : rebased)}`,
      undefined,
      'GIT_FAILED',
    )
  }
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
  const result = await run(['merge', '--ff-only', '-q', '--no-stat', commit], dir, {
    ...options,
    extraEnv: { GIT_REFLOG_ACTION: firstLine(message) },
    allowFailure: true,
  })
  if (result.exitCode === 0) return
  throw new IllegalStateError(
    `could not update ${dir}: ${gitDetail(result)}`,
    'nothing was changed there; fix what git names and run the merge again',
    'MERGE_FAILED',
  )
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.trim() || 'harness merge'
}
