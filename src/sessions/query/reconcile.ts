import { DiskFaultError } from '../../errors.js'
import type { BackendState, ReadEnv } from '../backends/backend.js'
import { byBackend, readerOf } from '../backends/index.js'
import { readEnvOf } from '../backends/read-env.js'
import type { RecordStore } from '../ports.js'
import { transition } from '../record/lifecycle.js'
import { type IdentityCheckOf, type Liveness, lastRun } from '../record/liveness.js'
import { applyRunExit } from '../record/outcome.js'
import type { SessionRecord } from '../record/schema.js'

/**
 * A record as reading commands show it, with what they computed (never stored): the liveness of a RUNNING one;
 * `queued` (the engine's reason) for one whose job waits in a cluster's queue; `unsettled` for one whose run
 * ended with nobody to record it yet, shown with the outcome its backend reads (SPEC §14 "The seam").
 */
export type SessionView = SessionRecord & { liveness?: Liveness; queued?: string; unsettled?: true }

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
 * What each RUNNING record's backend says of it: one query per backend for all of them (SPEC §9: one pass over
 * the process table, one `podman inspect`, one `squeue`), in the order given.
 */
export async function backendStates(
  records: readonly SessionRecord[],
  env: ReadEnv,
): Promise<Map<SessionRecord, BackendState>> {
  const states = new Map<SessionRecord, BackendState>()
  for (const group of byBackend(records).values()) {
    const reader = await readerOf(group[0] ?? {})
    const seen = await reader.liveness(group, env)
    for (const [i, record] of group.entries()) states.set(record, seen[i] ?? { kind: 'unverified' })
  }
  return states
}

/**
 * Any command that reads RUNNING records calls this. The one write it may make (SPEC §4) is a stale record
 * (everything it names verifiably gone) reconciled PAUSED under its lock, re-checked there: only if nobody wrote
 * it since it was read. A run that ended with nobody to record it is shown with the outcome its backend reads,
 * and left for an acting command to settle. With `dryRun` nothing is written.
 */
export async function reconcileViews(
  store: RecordStore,
  records: SessionRecord[],
  dryRun: boolean,
  check: IdentityCheckOf,
  now: Date,
): Promise<SessionView[]> {
  const running = records.filter((record) => record.status === 'RUNNING')
  if (running.length === 0) return records
  const env = readEnvOf(store, check, now)
  const states = await backendStates(running, env)
  const views: SessionView[] = []
  for (const record of records) {
    const state = states.get(record)
    views.push(state ? await viewOf(store, record, state, dryRun, env) : record)
  }
  return views
}

export async function reconcileView(
  store: RecordStore,
  record: SessionRecord,
  dryRun: boolean,
  /** The process table's answer and the time: the port's (`seen(ctx)`), never a default, so none is forgotten. */
  check: IdentityCheckOf,
  now: Date,
): Promise<SessionView> {
  const [view] = await reconcileViews(store, [record], dryRun, check, now)
  return view ?? record
}

/** A RUNNING record as its backend's state makes it look. */
async function viewOf(
  store: RecordStore,
  record: SessionRecord,
  state: BackendState,
  dryRun: boolean,
  env: ReadEnv,
): Promise<SessionView> {
  switch (state.kind) {
    case 'alive':
      return { ...record, liveness: state.liveness, ...(state.queued ? { queued: state.queued } : {}) }
    case 'unverified':
      return { ...record, liveness: 'unverified' }
    case 'ended': {
      const run = lastRun(record)
      const ended = run ? applyRunExit(record, run.n, state.exit, env.now) : undefined
      return ended ? { ...ended, unsettled: true } : { ...record, liveness: 'unverified' }
    }
    case 'stale': {
      const after = await reconcileStale(store, record, dryRun, env.now)
      if (after.status !== 'RUNNING' || after === record) return after
      // Written meanwhile (its supervisor was not gone after all): shown as it now is, nothing written.
      const again = (await backendStates([after], env)).get(after)
      return again && again.kind !== 'stale' ? viewOf(store, after, again, true, env) : after
    }
  }
}

/** The one write of a reading command: a stale record PAUSED, if nobody wrote it since it was read. */
async function reconcileStale(
  store: RecordStore,
  record: SessionRecord,
  dryRun: boolean,
  now: Date,
): Promise<SessionView> {
  if (dryRun) return markPaused(record, 'reconcile', now)
  try {
    const updated = await store.update(record.id, (current) =>
      current.status === 'RUNNING' && current.rev === record.rev && current.updated_at === record.updated_at
        ? markPaused(current, 'reconcile', now)
        : undefined,
    )
    return updated
  } catch (error) {
    // A read-only store still lists and shows: the reconciliation is shown, not written (one warning).
    if (!(error instanceof DiskFaultError && error.kind === 'READ_ONLY')) throw error
    store.warnOnce('read-only', 'the store is read-only: stale sessions are shown reconciled, not written')
    return markPaused(record, 'reconcile', now)
  }
}
