import { transition } from './lifecycle.js'
import { computeLiveness, type Liveness } from './liveness.js'
import type { SessionRecord } from './schema.js'
import type { SessionStore } from './store.js'

export type SessionView = SessionRecord & { liveness?: Liveness }

/** Marks a stale RUNNING record PAUSED/interrupted. Pure: used under the lock and for --dry-run alike. */
export function markInterrupted(record: SessionRecord, now = new Date()): SessionRecord {
  const status = transition(record.status, 'reconcile', record.id)
  const runs = record.runs ? [...record.runs] : record.runs
  const run = runs?.[runs.length - 1]
  if (runs && run && !run.ended_at) runs[runs.length - 1] = { ...run, ended_at: now.toISOString() }
  return { ...record, status, stop_reason: 'interrupted', stop_request: null, runs }
}

/**
 * Any command that reads a RUNNING record calls this: a stale one (supervisor and agent verifiably gone) is
 * reconciled under its lock — re-checked there, since its supervisor may have committed an exit meanwhile.
 * With `dryRun` the change is made in memory only.
 */
export async function reconcileView(
  store: SessionStore,
  record: SessionRecord,
  dryRun = false,
): Promise<SessionView> {
  const liveness = computeLiveness(record)
  if (liveness !== 'stale') return liveness ? { ...record, liveness } : record
  if (dryRun) return markInterrupted(record)
  const updated = await store.update(record.id, (current) =>
    current.status === 'RUNNING' && computeLiveness(current) === 'stale'
      ? markInterrupted(current)
      : undefined,
  )
  const after = computeLiveness(updated)
  return after ? { ...updated, liveness: after } : updated
}

export async function reconcileViews(
  store: SessionStore,
  records: SessionRecord[],
  dryRun = false,
): Promise<SessionView[]> {
  const views: SessionView[] = []
  for (const record of records)
    views.push(record.status === 'RUNNING' ? await reconcileView(store, record, dryRun) : record)
  return views
}
