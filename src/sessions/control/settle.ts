import { HarnessError } from '../../errors.js'
import type { ActEnv, BackendState } from '../backends/backend.js'
import { backendOf } from '../backends/index.js'
import { actEnv, settleSession } from '../backends/settle.js'
import type { SessionEnv } from '../ports.js'
import { resolveSessionId, seen } from '../query/query.js'
import { backendStates, reconcileView } from '../query/reconcile.js'
import type { SessionRecord } from '../record/schema.js'

/**
 * What an acting command lends the backends (SPEC §14 "The seam"): the store to write through, the process
 * table to signal, the time. Reading commands get a ReadEnv instead (query/reconcile.ts), which cannot write.
 */
export async function actEnvOf(ctx: SessionEnv): Promise<ActEnv> {
  return actEnv(await ctx.store(), ctx.processes, ...seen(ctx))
}

/**
 * What an acting command does first for a session it acts on: a RUNNING one whose run ended with nobody to
 * record it is settled (its work collected, its outcome recorded); anything else is returned as it is.
 */
export async function settleIfEnded(ctx: SessionEnv, record: SessionRecord): Promise<SessionRecord> {
  if (record.status !== 'RUNNING' || record.sealed !== true) return record
  const backend = await backendOf(record)
  return settleSession(backend, record, await actEnvOf(ctx))
}

/** What `session collect` did with one session. */
export interface CollectOutcome {
  id: string
  /** settled: its run's end recorded and its work collected; collected: an earlier run's work brought back. */
  outcome: 'settled' | 'collected' | 'running' | 'nothing' | 'failed' | 'reconciled'
  status: string
  exit_code: number | null
  reason?: string
}

/**
 * `harness session collect [<id>|--all]` (SPEC §7): settles finished container and remote sessions (their work
 * collected through the quarantine, what the backend held freed, the outcome recorded) and brings back work an
 * earlier collection could not. Sessions still running are left as they are; a stale one is reconciled.
 */
export async function collectSessions(
  ctx: SessionEnv,
  input: string | undefined,
  all: boolean,
): Promise<CollectOutcome[]> {
  const store = await ctx.store()
  const records = all
    ? store.list().filter((record) => record.sealed === true)
    : [store.get(resolveSessionId(store, input ?? '')) ?? undefined].filter((r) => r !== undefined)
  const env = await actEnvOf(ctx)
  const states = await backendStates(
    records.filter((record) => record.status === 'RUNNING'),
    env,
  )
  const outcomes: CollectOutcome[] = []
  for (const record of records) {
    const outcome = await collectOne(ctx, env, record, states.get(record))
    if (outcome && (!all || outcome.outcome !== 'nothing')) outcomes.push(outcome)
  }
  return outcomes
}

async function collectOne(
  ctx: SessionEnv,
  env: ActEnv,
  record: SessionRecord,
  state: BackendState | undefined,
): Promise<CollectOutcome | null> {
  const of = (outcome: CollectOutcome['outcome'], after: SessionRecord, reason?: string) => ({
    id: after.id,
    outcome,
    status: after.status,
    exit_code: after.exit_code ?? null,
    ...(reason ? { reason } : {}),
  })
  if (record.sealed !== true) return of('nothing', record, 'the record is foreign: harness never acts on it')
  const backend = await backendOf(record)
  if (record.status === 'RUNNING') {
    if (state?.kind === 'ended') return of('settled', await settleSession(backend, record, env, state))
    if (state?.kind === 'stale') {
      const [check, now] = seen(ctx)
      return of('reconciled', await reconcileView(env.store, record, false, check, now))
    }
    return of(state?.kind === 'unverified' ? 'nothing' : 'running', record)
  }
  const left = backend.uncollected(record)
  if (!left) return of('nothing', record)
  try {
    await backend.resume(record, env)
  } catch (error) {
    return of('failed', record, error instanceof HarnessError ? error.message : String(error))
  }
  return of('collected', env.store.get(record.id) ?? record)
}
