import { entryExists, removeEmptyFolder, removeFolderTree, unlinkIfThere } from '../../disk/door.js'
import type { GitEnvOptions } from '../../git/git.js'
import { deleteRefs, type RefChange, updateRefs } from '../../git/refs.js'
import { dropRegistrations, removeWorktreeFolder } from '../../git/removal.js'
import { deleteBranch, dropBranchConfig } from '../../git/repo.js'
import { removeListedWorktree } from '../../git/worktree.js'
import { backendOf } from '../backends/index.js'
import type { RecordStore as SessionStore } from '../record/record-store.js'
import type { SessionRecord } from '../record/schema.js'
import {
  BatchMember,
  changedReason,
  failedRemoval,
  type Progress,
  type RemovalCandidate,
  type RemovalResult,
  type RemovalStep,
  VetoError,
} from './candidate.js'
import type { Verdict } from './decision.js'
import { storeSnapshots } from './snapshots.js'
import { vetoChangedWorktrees } from './worktree-veto.js'

// The candidate's shape lives with the parts the batch shares; planners and callers name it here.
export type { RemovalCandidate, RemovalResult, RemovalStep } from './candidate.js'

export interface ExecutorOptions {
  dryRun: boolean
  /** Needed for candidates that are sessions. */
  store?: SessionStore
  /** The environment git runs with (the caller's, never this process's). */
  env: NodeJS.ProcessEnv
}

/** Carries out a verdict of `decideRemoval` for one candidate. Under dryRun nothing at all is written. */
export async function executeRemoval(
  candidate: RemovalCandidate,
  verdict: Verdict,
  options: ExecutorOptions,
): Promise<RemovalResult> {
  if (verdict.action === 'keep') return { status: 'kept', reasons: candidate.reasons, snapshot: null }
  const { forced } = verdict
  const progress: Progress = { snapshot: null, done: [] }
  try {
    if (options.dryRun) {
      if (forced && candidate.snapshot)
        progress.snapshot = await storeSnapshots(candidate.snapshot, true, options)
      progress.done = candidate.steps.filter(wouldRemove)
      return { status: 'removed', forced, snapshot: progress.snapshot, done: progress.done }
    }
    if (candidate.record) await removeSession(candidate, candidate.record, forced, progress, options)
    else await removeSteps(candidate, forced, progress, options)
  } catch (error) {
    return failedRemoval(error, progress.snapshot)
  }
  return { status: 'removed', forced, snapshot: progress.snapshot, done: progress.done }
}

async function removeSession(
  candidate: RemovalCandidate,
  record: SessionRecord,
  forced: boolean,
  progress: Progress,
  options: ExecutorOptions,
): Promise<void> {
  if (!options.store) throw new Error('removing a session needs its store')
  // Everything happens under the record's lock, so a resume cannot start the session halfway through.
  await options.store.delete(record.id, async (current) => {
    if (
      current.status === 'RUNNING' ||
      current.rev !== record.rev ||
      current.updated_at !== record.updated_at
    ) {
      throw new VetoError(changedReason(current))
    }
    await removeSteps(candidate, forced, progress, options)
  })
}

async function removeSteps(
  candidate: RemovalCandidate,
  forced: boolean,
  progress: Progress,
  git: GitEnvOptions,
): Promise<void> {
  if (forced && candidate.snapshot) progress.snapshot = await storeSnapshots(candidate.snapshot, false, git)
  for (const step of candidate.steps) {
    if (await runStep(step, forced, candidate.describe, git)) progress.done.push(step)
  }
}

/** Deletes one step's artefact; false when there was nothing to delete. */
async function runStep(
  step: RemovalStep,
  forced: boolean,
  describe: string,
  git: GitEnvOptions,
): Promise<boolean> {
  switch (step.kind) {
    case 'worktree': {
      const outcome = await removeListedWorktree(step.repo, step.entry, { force: forced, ...git })
      if (outcome === 'dirty') {
        throw new VetoError({
          code: 'DIRTY',
          kind: 'unsafe',
          message: `${describe} changed while it was being removed: it has uncommitted or untracked files`,
        })
      }
      return true
    }
    case 'empty-folder':
      return removeMissingOk(() => removeEmptyFolder(step.path))
    case 'branch':
      return deleteBranch(step.repo, step.name, step.tip, { dropConfig: step.dropConfig, ...git })
    case 'file':
      // Asynchronous: the batched mode deletes many logs at once, and their waits on the file system overlap.
      return unlinkIfThere(step.path)
    case 'refs': {
      await deleteRefs(step.repo, step.prefix, checkpointRefs(step), git)
      return true
    }
    case 'folder':
      // A link in the folder's place is there too (removed as a link, never followed).
      if (!entryExists(step.path)) return false
      removeFolderTree(step.path)
      return true
    case 'backend': {
      if (step.record.sealed !== true) return false
      await (await backendOf(step.record)).destroy(step.record, { env: git.env })
      return true
    }
  }
}

/** One candidate and its verdict, for the batched mode. */
export interface RemovalItem {
  candidate: RemovalCandidate
  verdict: Verdict
}

/** How many --force snapshots (each a few git processes) the batched mode takes at once. */
const SNAPSHOT_CONCURRENCY = 4

/**
 * The batched mode of `executeRemoval`, for many sessions at once (cleanup): the same verdicts, the same
 * check of each record under its lock, and the same --force snapshots, but the git work is done once for
 * all of them (docs/development/design.md, "Removal"): while every record's lock is held, the worktree
 * folders are deleted directly, ONE `git worktree prune` drops their registrations, ONE `git update-ref
 * --stdin` transaction deletes the branches (each only while it still points where it did when planned) and
 * the checkpoint refs; then logs and agent folders, and each record last. If the transaction fails (a branch
 * moved or went), the refs are deleted one session at a time and each failure is that session's own
 * (BRANCH_MOVED: kept). Candidates that are not sessions go through `executeRemoval`. Results are in order.
 */
export async function executeRemovals(
  items: readonly RemovalItem[],
  options: ExecutorOptions,
): Promise<RemovalResult[]> {
  const results: (RemovalResult | undefined)[] = items.map(() => undefined)
  const store = options.store
  const members: BatchMember[] = []
  for (const [index, { candidate, verdict }] of items.entries()) {
    if (options.dryRun || verdict.action === 'keep' || !candidate.record || !store) {
      results[index] = await executeRemoval(candidate, verdict, options)
    } else {
      members.push(new BatchMember(index, candidate, candidate.record, verdict.forced))
    }
  }
  if (store && members.length > 0) {
    const snapshots = new Limiter(SNAPSHOT_CONCURRENCY)
    // Each member holds its record's lock from here until the shared work has been done (or has failed) for
    // it; store.delete then deletes the record, under the same lock, or keeps it if `prepare` threw.
    const settled = members.map((member) =>
      store
        .delete(
          member.record.id,
          async (current) => {
            if (
              current.status === 'RUNNING' ||
              current.rev !== member.record.rev ||
              current.updated_at !== member.record.updated_at
            ) {
              throw new VetoError(changedReason(current))
            }
            const plan = member.candidate.snapshot
            if (member.forced && plan) {
              member.progress.snapshot = await snapshots.run(() => storeSnapshots(plan, false, options))
            }
            member.ready(true)
            const failure = await member.outcome
            if (failure) throw failure
          },
          member.record,
        )
        .then(
          () => member.removed(),
          (error: unknown) => {
            member.ready(false)
            return member.failed(error)
          },
        ),
    )
    const ready = await Promise.all(members.map((member) => member.isReady))
    await removeTogether(
      members.filter((_, i) => ready[i]),
      options,
    )
    for (const [i, result] of (await Promise.all(settled)).entries()) {
      const member = members[i]
      if (member) results[member.index] = result
    }
  }
  return results.map((result) => result ?? { status: 'gone' })
}

/** The shared part of the batched removal; settles every member's `outcome`, whatever happens. */
async function removeTogether(members: BatchMember[], git: GitEnvOptions): Promise<void> {
  try {
    // 0. Planning may be seconds old for a large batch: what was clean then is checked again now that every
    //    record is locked, as `git worktree remove` did for each one before the batched mode (and without
    //    --force it is the only check: planning left it here).
    // 1. Worktree folders (and empty folders left where a worktree was), several members at a time: each
    //    member's as soon as its check has passed, while the others are still being checked.
    const removedByRepo = new Map<string, { paths: string[]; members: BatchMember[] }>()
    const folders = new Limiter(FOLDER_CONCURRENCY)
    const deletions: Promise<void>[] = []
    const underway = new Map<string, Promise<unknown>>()
    try {
      await vetoChangedWorktrees(members, git, (member) => {
        deletions.push(
          folders.run(() => member.attemptAsync(() => removeFoldersOf(member, removedByRepo, underway))),
        )
      })
    } finally {
      // Never settle (release a lock) while a deletion is under way; attemptAsync never rejects.
      await Promise.all(deletions)
    }
    // 2. One prune per repository for their registrations, and 3. one transaction per repository for
    //    branches and checkpoint refs, side by side: neither git command looks at what the other changes
    //    (`update-ref` does not check worktrees), and with every folder gone either order leaves nothing a
    //    second cleanup would not finish. A member whose folders could not be deleted keeps its refs.
    const refsByRepo = new Map<string, BatchMember[]>()
    for (const member of members) {
      if (member.failure) continue
      for (const step of member.candidate.steps) {
        if (step.kind !== 'branch' && step.kind !== 'refs') continue
        const list = refsByRepo.get(step.repo) ?? []
        if (!list.includes(member)) list.push(member)
        refsByRepo.set(step.repo, list)
      }
    }
    const registrations = (async () => {
      for (const [repo, removed] of removedByRepo) {
        try {
          await dropRegistrations(repo, removed.paths, git)
        } catch (error) {
          for (const member of removed.members) member.fail(error)
        }
      }
    })()
    const refs = (async () => {
      for (const [repo, owners] of refsByRepo) await deleteRefsOf(repo, owners, git)
    })()
    await Promise.all([registrations, refs])
    // 4. Logs and the agents' own folders, several members at a time; the records go when each member's
    //    `outcome` settles.
    const files = new Limiter(FOLDER_CONCURRENCY)
    await Promise.all(
      members.map((member) =>
        files.run(() =>
          member.attemptAsync(async () => {
            for (const step of member.candidate.steps) {
              if (step.kind === 'file' || step.kind === 'folder' || step.kind === 'backend') {
                if (await runStep(step, member.forced, member.candidate.describe, git))
                  member.progress.done.push(step)
              }
            }
          }),
        ),
      ),
    )
  } catch (error) {
    for (const member of members) if (!member.failure) member.fail(error)
  } finally {
    for (const member of members) member.settle()
  }
}

/** How many worktree folders the batched removal deletes at once (node's thread pool has four threads). */
const FOLDER_CONCURRENCY = 8

/** A member's worktree folders and empty folders, in its steps' order; each removed worktree is noted by repository. */
async function removeFoldersOf(
  member: BatchMember,
  removedByRepo: Map<string, { paths: string[]; members: BatchMember[] }>,
  /** The deletions under way by path: two records naming one worktree wait on one deletion. */
  underway: Map<string, Promise<unknown>>,
): Promise<void> {
  for (const step of member.candidate.steps) {
    if (step.kind === 'worktree') {
      let deletion = underway.get(step.entry.path)
      if (!deletion) {
        deletion = removeWorktreeFolder(step.entry, member.layouts.get(step.entry.path))
        underway.set(step.entry.path, deletion)
      }
      await deletion
      member.progress.done.push(step)
      const repo = removedByRepo.get(step.repo) ?? { paths: [], members: [] }
      repo.paths.push(step.entry.path)
      repo.members.push(member)
      removedByRepo.set(step.repo, repo)
    } else if (step.kind === 'empty-folder') {
      if (removeMissingOk(() => removeEmptyFolder(step.path))) member.progress.done.push(step)
    }
  }
}

/** Branches and checkpoint refs of `owners` in `repo`: one transaction, else one session at a time. */
async function deleteRefsOf(repo: string, owners: BatchMember[], git: GitEnvOptions): Promise<void> {
  const deletions: RefChange[] = []
  for (const member of owners) {
    for (const step of member.candidate.steps) {
      if ((step.kind !== 'branch' && step.kind !== 'refs') || step.repo !== repo) continue
      if (step.kind === 'branch') deletions.push({ delete: `refs/heads/${step.name}`, old: step.tip })
      else if (step.kind === 'refs') {
        for (const ref of checkpointRefs(step)) deletions.push({ delete: ref })
      }
    }
  }
  let together = false
  try {
    together = (await updateRefs(repo, deletions, { ...git, message: 'harness: delete session' })).ok
  } catch {
    // A ref git cannot take on stdin: one at a time says whose it is.
  }
  for (const member of owners) {
    const steps = member.candidate.steps.filter(
      (step) => (step.kind === 'branch' || step.kind === 'refs') && step.repo === repo,
    )
    if (together) {
      // Deleted, whatever happened to the member meanwhile (its prune runs beside this): said so, and the
      // deleted branch's config goes with it, as `git branch -D` would.
      member.progress.done.push(...steps)
      for (const step of steps) {
        if (step.kind === 'branch' && step.dropConfig) {
          await dropBranchConfig(step.repo, step.name, git).catch((error: unknown) => member.fail(error))
        }
      }
      continue
    }
    await member.attemptAsync(async () => {
      for (const step of steps) {
        if (await runStep(step, member.forced, member.candidate.describe, git))
          member.progress.done.push(step)
      }
    })
  }
}

/** Runs at most `limit` tasks at a time. */
class Limiter {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.running++
    try {
      return await task()
    } finally {
      this.running--
      this.waiting.shift()?.()
    }
  }
}

function wouldRemove(step: RemovalStep): boolean {
  switch (step.kind) {
    case 'worktree':
    case 'branch':
    case 'refs':
      return true
    case 'empty-folder':
    case 'file':
    case 'folder':
      return entryExists(step.path)
    case 'backend':
      return false
  }
}

/** A session's checkpoint refs: only those under its own prefix, as names git takes on stdin. */
function checkpointRefs(step: Extract<RemovalStep, { kind: 'refs' }>): string[] {
  return step.refs.filter((ref) => ref.startsWith(step.prefix) && !/[\s\0]/.test(ref) && !ref.includes('..'))
}

function removeMissingOk(remove: () => void): boolean {
  try {
    remove()
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}
