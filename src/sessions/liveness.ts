import { checkIdentity, type IdentityCheck } from '../process/identity.js'
import type { Run, SessionRecord } from './schema.js'

/** Computed for every RUNNING record (SPEC §4); never stored. */
export type Liveness = 'running' | 'orphaned' | 'stale' | 'unverified'

export function lastRun(record: SessionRecord): Run | undefined {
  return record.runs?.[record.runs.length - 1]
}

/** Where the processes of a run were recorded: a run's own facts, else the record's metadata. */
function placeOf(record: SessionRecord, run: Run) {
  return {
    hostname: run.hostname ?? record.metadata?.hostname ?? null,
    boot_id: run.boot_id ?? record.metadata?.boot_id ?? null,
    pid_namespace: run.pid_namespace ?? record.metadata?.pid_namespace ?? null,
  }
}

export interface ProcessStates {
  supervisor: IdentityCheck | 'none'
  agent: IdentityCheck | 'none'
}

/** Checks the supervisor and agent of the latest run against the live system. */
export function processStates(record: SessionRecord): ProcessStates {
  const run = lastRun(record)
  if (!run) {
    // A record from an older tool: a bare pid is all we have, and a bare pid is never trusted.
    return { supervisor: 'none', agent: record.pid ? 'unverifiable' : 'none' }
  }
  const place = placeOf(record, run)
  const supervisor = run.supervisor_pid
    ? checkIdentity({ pid: run.supervisor_pid, start_time: run.supervisor_start_time, ...place })
    : 'none'
  const agentPid = run.pid ?? null
  const agent = agentPid ? checkIdentity({ pid: agentPid, start_time: run.pid_start_time, ...place }) : 'none'
  return { supervisor, agent }
}

export function livenessFromStates({ supervisor, agent }: ProcessStates): Liveness {
  if (supervisor === 'alive') return 'running'
  if (agent === 'alive') return supervisor === 'dead' ? 'orphaned' : 'running'
  const gone = (state: IdentityCheck | 'none') => state === 'dead' || state === 'none'
  if (gone(supervisor) && gone(agent) && !(supervisor === 'none' && agent === 'none')) return 'stale'
  return 'unverified'
}

export function computeLiveness(record: SessionRecord): Liveness | undefined {
  if (record.status !== 'RUNNING') return undefined
  return livenessFromStates(processStates(record))
}
