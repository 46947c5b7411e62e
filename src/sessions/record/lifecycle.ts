import { IllegalTransitionError } from '../../errors.js'
import type { SessionStatus } from './schema.js'

/** What can happen to a session (docs/record.md). */
export const SESSION_EVENTS = [
  'start', // harness run: (new) → RUNNING
  'exit-ok', // the agent exited 0
  'exit-error', // non-zero exit, a signal harness did not send, or the agent could not be started
  'kill', // the kill's stop_request was committed before the exit
  'pause', // harness session pause
  'interrupt', // the supervisor received Ctrl-C, a hang-up or SIGTERM with no stop_request (outcome.ts)
  'reconcile', // a stale session found by a reading command
  'recover', // an unverified session marked PAUSED on the user's word
  'resume', // harness session resume
] as const
export type SessionEvent = (typeof SESSION_EVENTS)[number]

/** `null` stands for "no record yet". */
export type TransitionFrom = SessionStatus | null

const FINISHED: readonly SessionStatus[] = ['PAUSED', 'COMPLETED', 'FAILED', 'KILLED']

/** The single source of truth for the lifecycle. Throws IllegalTransitionError (exit 4). */
export function transition(from: TransitionFrom, event: SessionEvent, id?: string): SessionStatus {
  const next = nextStatus(from, event)
  if (next === undefined) throw new IllegalTransitionError(from ?? 'new', event, id)
  return next
}

export function nextStatus(from: TransitionFrom, event: SessionEvent): SessionStatus | undefined {
  if (from === null) return event === 'start' ? 'RUNNING' : undefined
  if (from === 'RUNNING') {
    switch (event) {
      case 'exit-ok':
        return 'COMPLETED'
      case 'exit-error':
        return 'FAILED'
      case 'kill':
        return 'KILLED'
      case 'pause':
      case 'interrupt':
      case 'reconcile':
      case 'recover':
        return 'PAUSED'
      default:
        return undefined
    }
  }
  if (event === 'resume' && FINISHED.includes(from)) return 'RUNNING'
  return undefined
}

/**
 * The record as a store writes it at `at` (ISO time): `paused_at` is set whenever the write makes the session
 * PAUSED (from RUNNING, or a new record that starts paused), and kept as it was otherwise.
 */
export function withPausedAt<T extends { status: SessionStatus; paused_at?: string | null }>(
  before: SessionStatus | null,
  record: T,
  at: string,
): T {
  return record.status === 'PAUSED' && before !== 'PAUSED' ? { ...record, paused_at: at } : record
}
