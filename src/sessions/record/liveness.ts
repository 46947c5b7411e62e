import { checkIdentity, type IdentityCheck } from '../../process/identity.js'
import type { Run, SessionRecord } from './schema.js'

/**
 * Computed for every RUNNING record (docs/development/design.md, "Liveness and reconciliation"); never
 * stored.
 */
export type Liveness = 'running' | 'orphaned' | 'stale' | 'unverified'

export function lastRun(record: SessionRecord): Run | undefined {
  return record.runs?.[record.runs.length - 1]
}

/** A process as a run recorded it: pid, start time, and where it ran. */
export interface RecordedProcess {
  pid: number
  start_time: string | null
  hostname: string | null
  boot_id: string | null
  pid_namespace: string | null
}

/**
 * The supervisor and agent of a run (default: the latest), with where they ran: the run's own facts, else the
 * record's metadata. Every check of a recorded process starts here.
 */
export function runProcesses(
  record: SessionRecord,
  run: Run | undefined = lastRun(record),
): { supervisor: RecordedProcess | null; agent: RecordedProcess | null } {
  if (!run) return { supervisor: null, agent: null }
  const place = {
    hostname: run.hostname ?? record.metadata?.hostname ?? null,
    boot_id: run.boot_id ?? record.metadata?.boot_id ?? null,
    pid_namespace: run.pid_namespace ?? record.metadata?.pid_namespace ?? null,
  }
  return {
    supervisor: run.supervisor_pid
      ? { pid: run.supervisor_pid, start_time: run.supervisor_start_time ?? null, ...place }
      : null,
    agent: run.pid ? { pid: run.pid, start_time: run.pid_start_time ?? null, ...place } : null,
  }
}

export interface ProcessStates {
  supervisor: IdentityCheck | 'none'
  agent: IdentityCheck | 'none'
}

/** Checks one recorded process; the real check reads the live process table (a test passes its own). */
export type IdentityCheckOf = (recorded: RecordedProcess) => IdentityCheck

/** Checks the supervisor and agent of the latest run against the live system. */
export function processStates(record: SessionRecord, check: IdentityCheckOf = checkIdentity): ProcessStates {
  const run = lastRun(record)
  if (!run) {
    // A record from an older tool: a bare pid is never trusted, but one recorded here that holds no process is
    // dead (checkIdentity).
    const place = record.metadata
    const agent = record.pid
      ? check({
          pid: record.pid,
          start_time: null,
          hostname: place?.hostname ?? null,
          boot_id: place?.boot_id ?? null,
          pid_namespace: place?.pid_namespace ?? null,
        })
      : 'none'
    return { supervisor: 'none', agent }
  }
  const processes = runProcesses(record, run)
  return {
    supervisor: processes.supervisor ? check(processes.supervisor) : 'none',
    agent: processes.agent ? check(processes.agent) : 'none',
  }
}

export function livenessFromStates({ supervisor, agent }: ProcessStates): Liveness {
  if (supervisor === 'alive') return 'running'
  if (agent === 'alive') return supervisor === 'dead' ? 'orphaned' : 'running'
  const gone = (state: IdentityCheck | 'none') => state === 'dead' || state === 'none'
  if (gone(supervisor) && gone(agent) && !(supervisor === 'none' && agent === 'none')) return 'stale'
  return 'unverified'
}

export function computeLiveness(
  record: SessionRecord,
  check: IdentityCheckOf = checkIdentity,
): Liveness | undefined {
  if (record.status !== 'RUNNING') return undefined
  // A live supervisor settles it (livenessFromStates): listings of many running sessions skip the agent's check.
  const supervisor = runProcesses(record).supervisor
  const liveness =
    supervisor && check(supervisor) === 'alive' ? 'running' : livenessFromStates(processStates(record, check))
  // A foreign record is never acted on (docs/security.md): only "both verifiably gone" is believed of it.
  return record.sealed === false && liveness !== 'stale' ? 'unverified' : liveness
}
