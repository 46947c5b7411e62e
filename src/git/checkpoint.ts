import { assertRefArg, resolveCommit, revParseOrNull } from './common.js'
import { type GitEnvOptions, gitAt, splitZ } from './git.js'
import { storeRef } from './refs.js'
import {
  commitTree,
  type RestoreResult,
  readWorktreeState,
  restoreSnapshot,
  type WorktreeState,
} from './snapshot.js'

/**
 * Checkpoints (docs/continuity.md): a commit of the worktree's complete state whose first parent is the branch
 * HEAD of that moment. When the index held staged changes that differ from HEAD, a second parent records the
 * index as its own commit (as `git stash` does), so that a restore puts the index back too; otherwise the
 * checkpoint has HEAD as its only parent.
 */
export type CheckpointState = WorktreeState

/** Which of `commits` are commit objects in the repository: one `git cat-file --batch-check` for all of them. */
export async function existingCommits(
  repo: string,
  commits: string[],
  options: GitEnvOptions,
): Promise<Set<string>> {
  const asked = [...new Set(commits)].filter((c) => /^[0-9a-f]{40,64}$/.test(c))
  if (asked.length === 0) return new Set()
  const lines = await gitAt(repo, options).lines(['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    input: `${asked.join('\n')}\n`,
  })
  const found = new Set<string>()
  for (const line of lines) {
    const [name, type] = line.split(' ')
    if (name && type === 'commit') found.add(name)
  }
  return found
}

export interface CommitCheckpointOptions extends GitEnvOptions {
  worktreeDir: string
  /** Full ref, e.g. refs/harness/<id>/checkpoints/3. */
  ref: string
  message: string
  /** State read by readWorktreeState (to decide whether anything changed); read here when absent. */
  state?: CheckpointState
  /** The previous checkpoint's commit: `files_changed` counts against it (else against HEAD). */
  previous?: string | null
  /** Replace a ref that exists: only for a ref no record lists (left by a crash between ref and record). */
  overwrite?: boolean
}

export interface CheckpointCommit {
  commit: string
  /** Branch HEAD at that moment (first parent); null before the first commit. */
  head: string | null
  tree: string
  /** Paths that differ from the previous checkpoint (or from HEAD for the first one). */
  filesChanged: number
}

export async function commitCheckpoint(options: CommitCheckpointOptions): Promise<CheckpointCommit> {
  // The ref is made by the caller from a validated session id: no check-ref-format round trip here.
  const state = options.state ?? (await readWorktreeState(options.worktreeDir, options))
  const { topLevel, head, tree } = state
  const parents = head ? [head] : []
  if (head && state.indexTree && state.indexTree !== state.headTree) {
    const indexCommit = await commitTree(
      topLevel,
      state.indexTree,
      [head],
      `index of ${options.message.split('\n')[0]?.trim() ?? ''}`,
      options,
    )
    parents.push(indexCommit)
  }
  const commit = await commitTree(topLevel, tree, parents, options.message, options)
  const [, counted] = await Promise.all([
    storeRef(topLevel, options.ref, commit, options.message, options),
    countChanged(topLevel, options.previous ?? head, commit, options),
  ])
  let filesChanged = counted
  // A previous checkpoint whose commit is gone (pruned by hand): count against HEAD instead.
  if (filesChanged === null) filesChanged = (await countChanged(topLevel, head, commit, options)) ?? 0
  return { commit, head, tree, filesChanged }
}

async function countChanged(
  repo: string,
  from: string | null,
  to: string,
  options: GitEnvOptions,
): Promise<number | null> {
  const args = from
    ? ['diff-tree', '-r', '--no-renames', '--name-only', '-z', from, to]
    : ['ls-tree', '-r', '-z', '--name-only', to]
  const result = await gitAt(repo, options).try(args)
  return result.exitCode === 0 ? splitZ(result.stdout).length : null
}

/** The tree of `commit`, or null when that commit is not in the repository. */
export async function treeIfPresent(
  repo: string,
  commit: string,
  options: GitEnvOptions,
): Promise<string | null> {
  assertRefArg(commit, 'commit')
  return revParseOrNull(repo, `${commit}^{tree}`, options)
}

export interface RestoredCheckpoint extends RestoreResult {
  /** Where the branch (or detached HEAD) now points. */
  head: string | null
  /** Whether the index came from the checkpoint's own index commit (else from HEAD). */
  indexFromCheckpoint: boolean
}

/**
 * Puts a worktree back at a checkpoint: its files exactly as they were (files made since are removed, deleted
 * ones come back, ignored files stay), the branch at the checkpoint's HEAD and the index as it was. Callers take
 * a checkpoint of the current state first, so this is always undoable.
 */
export async function restoreCheckpoint(
  worktreeDir: string,
  commit: string,
  options: GitEnvOptions & { reflogMessage?: string },
): Promise<RestoredCheckpoint> {
  const topLevel = await gitAt(worktreeDir, options).text(['rev-parse', '--show-toplevel'])
  const git = gitAt(topLevel, options)
  const target = await resolveCommit(topLevel, commit, options)
  const parents = (await git.text(['rev-list', '--parents', '-n', '1', target])).split(' ').slice(1)
  const [head, indexCommit] = parents
  // Files first, while the current index still says which paths are tracked (those not in the checkpoint go).
  const files = await restoreSnapshot(topLevel, target, options)
  if (head) {
    await git.run(['update-ref', '-m', options.reflogMessage ?? `harness: restore ${target}`, 'HEAD', head])
  }
  const indexSource = indexCommit ?? head
  await git.run(['read-tree', indexSource ?? '--empty'])
  // read-tree drops stat data: refresh it so that `git status` does not re-hash every file (exit 1 = changes).
  await git.try(['update-index', '-q', '--refresh'])
  return { ...files, head: head ?? null, indexFromCheckpoint: indexCommit !== undefined }
}
