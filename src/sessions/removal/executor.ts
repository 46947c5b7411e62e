import { existsSync, rmdirSync, rmSync, unlinkSync } from 'node:fs'
import { SessionNotFoundError } from '../../errors.js'
import { deleteBranchAt, removeListedWorktree } from '../../git/removal.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import type { SessionRecord } from '../schema.js'
import type { SessionStore } from '../store.js'
import { classifyError, type KeepReason, type Verdict } from './decision.js'
import { type SnapshotPlan, type SnapshotRefs, storeSnapshots } from './snapshots.js'

/**
 * One thing a removal deletes. The executor below is the only code that deletes anything for cleanup, delete,
 * prune and archive: a safety check on a kind of step (containment, ownership) belongs in `runStep`, and a
 * new kind of artefact is a new variant here plus its case there.
 */
export type RemovalStep =
  /** A worktree registered with git (`git worktree remove`; `--force` only when the removal is forced). */
  | { kind: 'worktree'; repo: string; entry: WorktreeInfo }
  /** An empty folder left where a worktree was (removed only while empty). */
  | { kind: 'empty-folder'; path: string }
  /** A local branch, deleted only while it still points at `tip` (else BRANCH_MOVED, kept). */
  | { kind: 'branch'; repo: string; name: string; tip: string; dropConfig: boolean }
  /** A file harness wrote (the session's log); one already gone is fine. */
  | { kind: 'file'; path: string }
  /** A folder harness wrote with everything in it (the agent's own files); one already gone is fine. */
  | { kind: 'folder'; path: string }
  /** Refs under `prefix` (the session's checkpoints), deleted in one transaction; refs already gone are fine. */
  | { kind: 'refs'; repo: string; prefix: string; refs: string[] }

/** What a planner hands over: why it might be kept, what --force snapshots, and what goes, in order. */
export interface RemovalCandidate {
  reasons: KeepReason[]
  /** What --force stores under refs/harness/<name>/ first; null when there is nothing to keep. */
  snapshot: SnapshotPlan | null
  steps: RemovalStep[]
  /**
   * A session's own record: the steps run under its lock, only while the record is still as planned (not
   * resumed, not rewritten), and the record is deleted last, so that an interrupted removal leaves a record
   * pointing at whatever is left.
   */
  record?: SessionRecord
  /** How a change found during the removal is worded (a worktree that became dirty). */
  describe: string
}

export type RemovalResult =
  | {
      status: 'removed'
      forced: boolean
      snapshot: SnapshotRefs | null
      /** The steps that removed something (under --dry-run: that would). */
      done: RemovalStep[]
    }
  | {
      status: 'kept'
      reasons: KeepReason[]
      snapshot: SnapshotRefs | null
      /** Set when a failure (not a safety rule) stopped the removal. */
      error?: Error
    }
  /** The session's record was deleted by someone else meanwhile: nothing to report. */
  | { status: 'gone' }

export interface ExecutorOptions {
  dryRun: boolean
  /** Needed for candidates that are sessions. */
  store?: SessionStore
}

/** Carries out a verdict of `decideRemoval` for one candidate. Under dryRun nothing at all is written. */
export async function executeRemoval(
  candidate: RemovalCandidate,
  verdict: Verdict,
  options: ExecutorOptions,
): Promise<RemovalResult> {
  if (verdict.action === 'keep') return { status: 'kept', reasons: candidate.reasons, snapshot: null }
  const { forced } = verdict
  const progress: Progress = { snapshot: null, done: [], dirty: false }
  try {
    if (options.dryRun) {
      if (forced && candidate.snapshot) progress.snapshot = await storeSnapshots(candidate.snapshot, true)
      progress.done = candidate.steps.filter(wouldRemove)
      return { status: 'removed', forced, snapshot: progress.snapshot, done: progress.done }
    }
    if (candidate.record) await removeSession(candidate, candidate.record, forced, progress, options)
    else await removeSteps(candidate, forced, progress)
  } catch (error) {
    if (error instanceof SessionNotFoundError) return { status: 'gone' }
    const snapshot = progress.snapshot
    if (error instanceof VetoError) return { status: 'kept', reasons: [error.reason], snapshot }
    return {
      status: 'kept',
      reasons: [classifyError(error)],
      snapshot,
      error: error instanceof Error ? error : new Error(String(error)),
    }
  }
  return { status: 'removed', forced, snapshot: progress.snapshot, done: progress.done }
}

interface Progress {
  snapshot: SnapshotRefs | null
  done: RemovalStep[]
  dirty: boolean
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
    await removeSteps(candidate, forced, progress)
  })
}

async function removeSteps(candidate: RemovalCandidate, forced: boolean, progress: Progress): Promise<void> {
  if (forced && candidate.snapshot) progress.snapshot = await storeSnapshots(candidate.snapshot, false)
  for (const step of candidate.steps) {
    if (await runStep(step, forced, candidate.describe)) progress.done.push(step)
  }
}

/** Deletes one step's artefact; false when there was nothing to delete. */
async function runStep(step: RemovalStep, forced: boolean, describe: string): Promise<boolean> {
  switch (step.kind) {
    case 'worktree': {
      const outcome = await removeListedWorktree(step.repo, step.entry, { force: forced })
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
      return removeMissingOk(() => rmdirSync(step.path))
    case 'branch':
      return deleteBranchAt(step.repo, step.name, step.tip, { dropConfig: step.dropConfig })
    case 'file':
      return removeMissingOk(() => unlinkSync(step.path))
    case 'refs': {
      const { deleteRefs } = await import('../../git/checkpoint.js')
      await deleteRefs(step.repo, step.prefix, step.refs)
      return true
    }
    case 'folder':
      if (!existsSync(step.path)) return false
      rmSync(step.path, { recursive: true, force: true })
      return true
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
      return existsSync(step.path)
  }
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

function changedReason(current: SessionRecord): KeepReason {
  return {
    code: 'SESSION_CHANGED',
    kind: 'blocked',
    message:
      current.status === 'RUNNING'
        ? 'it was resumed meanwhile (now RUNNING)'
        : 'its record changed meanwhile: run the command again',
  }
}

/** Stops a removal under the lock: what was planned is no longer true (kept, with this reason). */
class VetoError extends Error {
  constructor(readonly reason: KeepReason) {
    super(reason.message)
  }
}
