import { dirname } from 'node:path'
import type { RecordStore as SessionStore } from '../ports.js'
import { lastRun } from '../record/liveness.js'
import { applyRunExit } from '../record/outcome.js'
import type { SessionRecord } from '../record/schema.js'
import type { RunSettlement } from './backend.js'
import { backendFor } from './registry.js'

/**
 * The engine supervises (docs/backends.md): a container session whose supervisor is gone (its harness was
 * SIGKILLed) is settled from what the engine says, by whichever command reads it. Only a sealed record's
 * container is looked at, and only when the engine reports the identity the record holds.
 */

// The engine's own settings (CONTAINERS_CONF, DOCKER_HOST, PATH) are the user's: the store carries the
// environment of the command that opened it.
export function settlementOf(record: SessionRecord, harnessDir: string): RunSettlement | null {
  if (!record.container) return null
  return {
    id: record.id,
    container: record.container,
    harnessDir,
    repoDir: record.is_worktree ? (record.base_dir ?? null) : null,
    worktreeDir: record.worktree_dir,
    branch: record.is_worktree ? (record.git_branch ?? null) : null,
  }
}

export type EngineLiveness =
  | { kind: 'running' }
  | { kind: 'unverified' }
  | { kind: 'gone' }
  | { kind: 'settled'; record: SessionRecord }

/**
 * A RUNNING container record without a live supervisor: `running` while its container runs, settled with
 * the container's real exit code once it has exited (commits collected, container removed), `gone` when the
 * engine has no such container (the record's own reconciliation then applies).
 */
export async function engineLiveness(
  store: SessionStore,
  record: SessionRecord,
  dryRun: boolean,
  env: NodeJS.ProcessEnv = store.env,
): Promise<EngineLiveness> {
  const backend = await backendFor('container')
  const view = await backend.view(record, env)
  if (view.kind === 'unverified' && view.warning) {
    store.warnOnce(
      'engine',
      `${view.warning}: container sessions are shown as their records say (unverified)`,
    )
  }
  if (view.kind === 'running' || view.kind === 'unverified' || view.kind === 'gone')
    return { kind: view.kind }
  if (view.kind !== 'exited') return { kind: 'gone' }
  const run = lastRun(record)
  if (!run) return { kind: 'unverified' }
  const exit = { exitCode: view.exitCode, signal: null, stopped: false }
  if (dryRun) return { kind: 'settled', record: applyRunExit(record, run.n, exit) ?? record }
  const settlement = settlementOf(record, dirname(store.dir))
  const collected = settlement ? await backend.settle(settlement, env).catch(() => undefined) : undefined
  const updated = await store.update(record.id, (current) => {
    if (current.status !== 'RUNNING' || lastRun(current)?.n !== run.n) return undefined
    if (current.container?.id !== record.container?.id) return undefined
    return applyRunExit(withCollected(current, collected), run.n, exit)
  })
  return { kind: 'settled', record: updated }
}

/** `kill` with no supervisor: the verified container is stopped (grace, then force), removed, and settled. */
export async function stopContainerSession(
  store: SessionStore,
  record: SessionRecord,
  graceMs: number,
  env: NodeJS.ProcessEnv = store.env,
): Promise<SessionRecord | 'unverified'> {
  const backend = await backendFor('container')
  const run = lastRun(record)
  const outcome = await backend.stop(record, graceMs, env)
  if (outcome === 'unverified' || !run) return 'unverified'
  const settlement = settlementOf(record, dirname(store.dir))
  const collected = settlement ? await backend.settle(settlement, env).catch(() => undefined) : undefined
  return store.update(record.id, (current) =>
    applyRunExit(withCollected(current, collected), run.n, {
      exitCode: null,
      signal: outcome === 'stopped' ? 'SIGTERM' : null,
      stopped: outcome === 'stopped',
    }),
  )
}

/** The record with how its run's work was collected, before the run's exit is applied (outcome.ts reads it). */
function withCollected(record: SessionRecord, collected: unknown): SessionRecord {
  if (!record.container || !collected) return record
  return { ...record, container: { ...record.container, collected: collected as { kind: string } } }
}

/** `wait` with no supervisor: blocks in the engine until the container exits (undefined: nothing to wait on). */
export async function waitForContainer(
  record: SessionRecord,
  timeoutMs: number | undefined,
  env: NodeJS.ProcessEnv,
): Promise<number | null | undefined> {
  const backend = await backendFor('container')
  return backend.wait(record, env, timeoutMs)
}
