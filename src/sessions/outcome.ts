import { constants } from 'node:os'
import { type SessionEvent, transition } from './lifecycle.js'
import { lastRun } from './liveness.js'
import type { Run, SessionRecord } from './schema.js'

/** How a run ended, as the supervisor saw it. */
export interface RunExit {
  exitCode: number | null
  signal: string | null
  /** harness itself was told to stop (SIGTERM/SIGHUP) without a stop_request. */
  interrupted?: boolean
  /**
   * The stop signalled the agent. A stop_request decides the status only then: an agent that exited by itself
   * first gets its own status, and the request is cleared (docs/security.md). Default: same as `interrupted`.
   */
  stopped?: boolean
  /** The agent could not be started at all. */
  spawnError?: string
  /** The agent exited 0 but its output reported a failure (pi in `--mode json`, docs/providers.md). */
  reportedError?: string
}

/** 128+n for a signal, as shells report it. */
export function signalExitCode(signal: string | null | undefined): number | null {
  if (!signal) return null
  const n = (constants.signals as Record<string, number>)[signal]
  return n === undefined ? null : 128 + n
}

/**
 * The final status of a run (docs/design.md, "Runs and the supervisor"), decided under the record's lock: a committed stop_request wins
 * (kill → KILLED, pause → PAUSED) even if the agent happened to exit by itself at the same moment; that is
 * what makes "KILLED exactly when the kill's request was committed first" hold.
 * Returns undefined when the record is no longer this run's to finish (someone else already did).
 */
export function applyRunExit(
  record: SessionRecord,
  runN: number,
  exit: RunExit,
  now = new Date(),
): SessionRecord | undefined {
  const run = lastRun(record)
  if (record.status !== 'RUNNING' || !run || run.n !== runN) return undefined
  const at = now.toISOString()
  let event: SessionEvent
  let stopReason: string
  const stopped = exit.stopped ?? exit.interrupted ?? false
  const request = stopped ? record.stop_request : null
  if (request?.action === 'kill') {
    event = 'kill'
    stopReason = 'killed'
  } else if (request?.action === 'pause') {
    event = 'pause'
    stopReason = 'paused'
  } else if (exit.interrupted && !record.stop_request) {
    event = 'interrupt'
    stopReason = 'interrupted'
  } else if (exit.spawnError) {
    event = 'exit-error'
    stopReason = 'start-failed'
  } else if (exit.exitCode === 0 && !exit.signal && exit.reportedError) {
    event = 'exit-error'
    stopReason = 'agent-error'
  } else if (exit.exitCode === 0 && !exit.signal) {
    event = 'exit-ok'
    stopReason = 'exited'
  } else {
    event = 'exit-error'
    stopReason = exit.signal ? 'signal' : 'exit-code'
  }
  const status = transition(record.status, event, record.id)
  // A paused session has not finished: no final exit code (`session wait` then exits 4).
  // A reported failure keeps the run's true exit code (0) but the session's is 1, so `wait` and scripts see it.
  const topExit =
    status === 'PAUSED'
      ? null
      : stopReason === 'agent-error'
        ? 1
        : (exit.exitCode ?? signalExitCode(exit.signal))
  const error = exit.spawnError ?? (stopReason === 'agent-error' ? exit.reportedError : undefined)
  const endedRun: Run = {
    ...run,
    ended_at: at,
    exit_code: exit.exitCode,
    signal: exit.signal,
    ...(error ? { error } : {}),
  }
  const runs = [...(record.runs ?? [])]
  runs[runs.length - 1] = endedRun
  return {
    ...record,
    status,
    exit_code: topExit,
    stop_reason: stopReason,
    completed_at: status === 'PAUSED' ? null : at,
    runs,
    // A request that did not stop the agent (it exited by itself first) is not carried into the next run.
    ...(record.stop_request && !request ? { stop_request: null } : {}),
    // The agent's screen state describes a live run only.
    ...(record.state != null ? { state: null } : {}),
  }
}
