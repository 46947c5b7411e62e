import { HarnessError } from '../../errors.js'

/**
 * Why something was kept:
 * - `unsafe`: removing it would lose work (uncommitted files, unmerged commits); `--force` snapshots it under
 *   refs/harness/<name>/ first and then removes it;
 * - `blocked`: harness does not remove it even with `--force` (locked, checked out elsewhere, moved, running);
 * - `error`: something failed; what was not removed yet is still there, the record included.
 */
export type ReasonKind = 'unsafe' | 'blocked' | 'error'

export interface KeepReason {
  /** Stable, for scripts: DIRTY, UNMERGED, DETACHED_HEAD, LOCKED, BRANCH_CHECKED_OUT, BRANCH_MOVED, … */
  code: string
  kind: ReasonKind
  message: string
}

export type Verdict = { action: 'keep' } | { action: 'remove'; forced: boolean }

/**
 * The one keep/remove rule of cleanup, delete, prune (and archive): anything blocked or failed is kept; work
 * that would be lost is kept unless --force, which then removes it after a snapshot (`forced`).
 */
export function decideRemoval(reasons: readonly KeepReason[], force: boolean): Verdict {
  const unsafe = reasons.some((r) => r.kind === 'unsafe')
  if (reasons.some((r) => r.kind !== 'unsafe') || (unsafe && !force)) return { action: 'keep' }
  return { action: 'remove', forced: unsafe }
}

/** Error codes that mean "harness will not remove this", not "something went wrong": kept, exit 0. */
const BLOCKING_CODES = new Set([
  'BRANCH_MOVED',
  'SESSION_CHANGED',
  'WORKTREE_LOCKED',
  'MAIN_WORKTREE',
  'SESSION_RUNNING',
])

/** The one classification of a failure during planning or removal, as the reason something was kept. */
export function classifyError(error: unknown): KeepReason {
  if (error instanceof HarnessError) {
    return {
      code: error.code,
      kind: BLOCKING_CODES.has(error.code) ? 'blocked' : 'error',
      message: error.message,
    }
  }
  return {
    code: 'UNEXPECTED',
    kind: 'error',
    message: error instanceof Error ? error.message : String(error),
  }
}

/** Whether a report's kept items include a failure (the command then exits 1). */
export function anyFailed(kept: readonly { reasons: readonly KeepReason[] }[]): boolean {
  return kept.some((item) => item.reasons.some((r) => r.kind === 'error'))
}
