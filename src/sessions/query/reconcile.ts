import { DiskFaultError } from '../../errors.js'
import type { RecordStore } from '../ports.js'
import { transition } from '../record/lifecycle.js'
import { computeLiveness, type IdentityCheckOf, type Liveness } from '../record/liveness.js'
import type { SessionRecord } from '../record/schema.js'

export type SessionView = SessionRecord & { liveness?: Liveness }

/**
 * Ends a RUNNING record whose processes are gone as PAUSED (resumable): `reconcile` for a stale one
 * (stop_reason "interrupted"), `recover` for an unverified one on the user's word ("recovered").
 * Pure: used under the lock and for --dry-run alike.
 */
export function markPaused(record: SessionRecord, event: 'reconcile' | 'recover', now: Date): SessionRecord {
  const status = transition(record.status, event, record.id)
  const runs = record.runs ? [...record.runs] : record.runs
  const run = runs?.[runs.length - 1]
  if (runs && run && !run.ended_at) runs[runs.length - 1] = { ...run, ended_at: now.toISOString() }
  const stopReason = event === 'reconcile' ? 'interrupted' : 'recovered'
  return {
    ...record,
    status,
    stop_reason: stopReason,
    stop_request: null,
    runs,
    // The agent's screen state describes a live run only.
    ...(record.state != null ? { state: null } : {}),
  }
}

/**
 * Any command that reads a RUNNING record calls this: a stale one (supervisor and agent verifiably gone) is
 * reconciled under its lock — re-checked there, since its supervisor may have committed an exit meanwhile.
 * With `dryRun` the change is made in memory only.
 */
export async function reconcileView(
  store: RecordStore,
  record: SessionRecord,
  dryRun: boolean,
  /** The process table's answer and the time: the port's (`seen(ctx)`), never a default, so none is forgotten. */
  check: IdentityCheckOf,
  now: Date,
): Promise<SessionView> {
  const liveness = computeLiveness(record, check)
  // A container session's engine supervises it: without a live supervisor, ask the engine (docs/backends.md).
  if (liveness && liveness !== 'running' && record.backend === 'container' && record.sealed === true) {
    const { engineLiveness } = await import('../backends/settle.js')
    const engine = await engineLiveness(store, record, dryRun)
    if (engine.kind === 'settled') return engine.record
    if (engine.kind !== 'gone') return { ...record, liveness: engine.kind }
  }
  if (liveness !== 'stale') return liveness ? { ...record, liveness } : record
  if (dryRun) return markPaused(record, 'reconcile', now)
  let updated: SessionRecord
  try {
    updated = await store.update(record.id, (current) =>
      current.status === 'RUNNING' && computeLiveness(current, check) === 'stale'
        ? markPaused(current, 'reconcile', now)
        : undefined,
    )
  } catch (error) {
    // A read-only store still lists and shows: the reconciliation is shown, not written (one warning).
    if (!(error instanceof DiskFaultError && error.kind === 'READ_ONLY')) throw error
    store.warnOnce('read-only', 'the store is read-only: stale sessions are shown reconciled, not written')
    return markPaused(record, 'reconcile', now)
  }
  const after = computeLiveness(updated, check)
  return after ? { ...updated, liveness: after } : updated
}

export async function reconcileViews(
  store: RecordStore,
  records: SessionRecord[],
  dryRun: boolean,
  check: IdentityCheckOf,
  now: Date,
): Promise<SessionView[]> {
  const views: SessionView[] = []
  for (const record of records)
    views.push(record.status === 'RUNNING' ? await reconcileView(store, record, dryRun, check, now) : record)
  return views
}
