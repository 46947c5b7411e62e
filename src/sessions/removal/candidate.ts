// A removal candidate and its steps, and what its removal comes to (one by one or batched): the parts the
// executor (executor.ts) and the batch's worktree check (worktree-veto.ts) share.

import { SessionNotFoundError } from '../../errors.js'
import type { WorktreeLayout } from '../../git/clean-check.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import type { SessionRecord } from '../record/schema.js'
import { classifyError, type KeepReason } from './decision.js'
import type { SnapshotPlan, SnapshotRefs } from './snapshots.js'

/**
 * One thing a removal deletes. The executor (executor.ts) is the only code that deletes anything for cleanup, delete,
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
  /**
   * What the session still holds in its backend (a container left behind, a Slurm session's spool folder and
   * any job of it), destroyed by its backend (docs/backends.md): only a sealed record's, as it names it.
   */
  | { kind: 'backend'; record: SessionRecord }

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
  /**
   * Its worktree's files were not looked at when it was planned (cleanup leaves that to the check under the
   * lock, which is then the only one): what that check finds is worded as planning words it.
   */
  contentUnchecked?: boolean
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

export interface Progress {
  snapshot: SnapshotRefs | null
  done: RemovalStep[]
}

/** One session in the batched mode: its lock is held while `outcome` is pending. */
export class BatchMember {
  readonly progress: Progress = { snapshot: null, done: [] }
  /** What each of its worktrees held when proven clean under its lock (deleted by name, then walked). */
  readonly layouts = new Map<string, WorktreeLayout>()
  failure: unknown = null
  readonly isReady: Promise<boolean>
  readonly outcome: Promise<unknown>
  ready: (held: boolean) => void = () => {}
  private settleOutcome: (failure: unknown) => void = () => {}

  constructor(
    readonly index: number,
    readonly candidate: RemovalCandidate,
    readonly record: SessionRecord,
    readonly forced: boolean,
  ) {
    this.isReady = new Promise((resolve) => {
      this.ready = resolve
    })
    this.outcome = new Promise((resolve) => {
      this.settleOutcome = resolve
    })
  }

  fail(error: unknown): void {
    this.failure ??= error
  }

  /**
   * Kept before anything was done under its lock (the check of its worktree): the lock is released now, not
   * when the whole batch is done, so that a resume need not wait for the others.
   */
  keep(error: unknown): void {
    this.fail(error)
    this.settle()
  }

  async attemptAsync(fn: () => Promise<void>): Promise<void> {
    if (this.failure) return
    try {
      await fn()
    } catch (error) {
      this.fail(error)
    }
  }

  settle(): void {
    this.settleOutcome(this.failure)
  }

  removed(): RemovalResult {
    return {
      status: 'removed',
      forced: this.forced,
      snapshot: this.progress.snapshot,
      done: this.progress.done,
    }
  }

  failed(error: unknown): RemovalResult {
    return failedRemoval(error, this.progress.snapshot)
  }
}

/** What a removal that threw comes to, one-by-one or batched: gone, vetoed, or kept for a classified error. */
export function failedRemoval(error: unknown, snapshot: Progress['snapshot']): RemovalResult {
  if (error instanceof SessionNotFoundError) return { status: 'gone' }
  if (error instanceof VetoError) return { status: 'kept', reasons: error.reasons, snapshot }
  return {
    status: 'kept',
    reasons: [classifyError(error)],
    snapshot,
    error: error instanceof Error ? error : new Error(String(error)),
  }
}

export function changedReason(current: SessionRecord): KeepReason {
  return {
    code: 'SESSION_CHANGED',
    kind: 'blocked',
    message:
      current.status === 'RUNNING'
        ? 'it was resumed meanwhile (now RUNNING)'
        : 'its record changed meanwhile: run the command again',
  }
}

/** Stops a removal under the lock: what was planned is no longer true (kept, with these reasons). */
export class VetoError extends Error {
  readonly reasons: KeepReason[]

  constructor(...reasons: [KeepReason, ...KeepReason[]]) {
    super(reasons.map((r) => r.message).join('; '))
    this.reasons = reasons
  }
}
