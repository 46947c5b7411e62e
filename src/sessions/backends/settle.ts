import type { Processes, RecordStore } from '../ports.js'
import type { IdentityCheckOf } from '../record/liveness.js'
import { lastRun } from '../record/liveness.js'
import { applyRunExit, type RunExit } from '../record/outcome.js'
import type { SessionRecord } from '../record/schema.js'
import type { ActEnv, BackendState, SessionBackend } from './backend.js'
import { readEnvOf } from './read-env.js'

/**
 * Settling (SPEC §14 "The seam", docs/backends.md): a RUNNING session whose run ended with no supervisor of
 * harness's to record it (a container whose client was SIGKILLed, a Slurm job) is settled by a command that acts
 * (`run`, `resume`, `kill`, `recover`, `cleanup`, `merge`, `collect`), never by one that reads: its work is
 * collected through the quarantine (SPEC §10), what the run held is released, and the outcome the backend read
 * (the engine's exit code, the job's exit-code file) is recorded in the same update as the collected work.
 *
 * Collecting can take a while (a large bundle), longer than anyone should wait for a record's lock: settlers of
 * one session take turns through `sessions/<id>.settle.lock`, and the record's own lock is held for the write
 * alone, re-checking there that the run is still the one that ended and still RUNNING.
 */

/** What an acting command lends the backends: what a reading one does, and the store to write through. */
export function actEnv(store: RecordStore, processes: Processes, check: IdentityCheckOf, now: Date): ActEnv {
  return { ...readEnvOf(store, check, now), store, processes }
}

/** How long a settler waits for another one of the same session (a collection of a large bundle). */
const SETTLE_PATIENCE_MS = 15 * 60_000

/** Settles `record` if its backend says its run ended; returns the record as it then stands. */
export async function settleSession(
  backend: SessionBackend,
  record: SessionRecord,
  env: ActEnv,
  state?: BackendState,
): Promise<SessionRecord> {
  if (record.status !== 'RUNNING' || record.sealed !== true) return record
  const seen = state ?? (await backend.liveness([record], env))[0]
  if (seen?.kind !== 'ended') return record
  return settleEnded(backend, record, seen.exit, env)
}

/** Settles the ended run of `record` with `exit`: its work collected, then the outcome recorded (one update). */
export async function settleEnded(
  backend: SessionBackend,
  record: SessionRecord,
  exit: RunExit,
  env: ActEnv,
): Promise<SessionRecord> {
  const runN = lastRun(record)?.n
  const claim = await env.store.claim(record.id, 'settle', SETTLE_PATIENCE_MS)
  try {
    // Another command may have settled it (or resumed it) while this one waited for its turn.
    const current = env.store.get(record.id)
    if (current?.status !== 'RUNNING' || lastRun(current)?.n !== runN || current.sealed !== true) {
      return current ?? record
    }
    const change = await backend.collect(current, env)
    return await env.store.update(record.id, (now) =>
      now.status === 'RUNNING' && lastRun(now)?.n === runN && runN !== undefined
        ? applyRunExit(change(now), runN, exit, env.now)
        : undefined,
    )
  } finally {
    claim.release()
  }
}
