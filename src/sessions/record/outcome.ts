import { constants } from 'node:os'
import type { Usage } from '../../history/events.js'
import { sumCost } from '../../history/usage.js'
import type { AgentExit } from '../../process/supervisor.js'
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
  /**
   * The session's cost reached its budget in this run, or the agent said it stopped at its own limit (claude's
   * `error_max_budget_usd`): an agent that then ends other than by success is PAUSED with `stop_reason: budget`.
   */
  budgetReached?: boolean
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
    stopReason = request.reason === 'budget' ? 'budget' : 'paused'
  } else if (exit.interrupted && !record.stop_request) {
    event = 'interrupt'
    stopReason = 'interrupted'
  } else if (exit.spawnError) {
    event = 'exit-error'
    stopReason = 'start-failed'
  } else if (exit.budgetReached && !(exit.exitCode === 0 && !exit.signal && !exit.reportedError)) {
    event = 'pause'
    stopReason = 'budget'
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

/** The run's exit as `applyRunExit` takes it, from how the supervisor saw the agent end (pure). */
export function runExitOf(exit: AgentExit, reportedError: string | undefined): RunExit {
  return {
    exitCode: exit.exitCode,
    signal: exit.signal,
    interrupted: exit.stopSignal !== null,
    stopped: exit.stopped,
    spawnError: exit.spawnError,
    reportedError,
  }
}

/** What the supervisor read from the run's log and worktree once the agent had ended. */
export interface RunEndFacts {
  /** Where this run's output starts in the log and the usage it reported (undefined: the run has no log). */
  usage?: { logStart: number; usage: Usage | null }
  /** The agent's own session id, found in its output. */
  agentSessionId?: string
  /** Paths changed against the base commit; undefined when git could not tell. */
  files?: string[]
  /** Why the log is incomplete, if it is. */
  logError?: string
}

/**
 * The record once run `runN` ended (pure): `applyRunExit`'s status and fields, with the run's usage and the
 * session's cost, the captured agent session id, `files_modified` and `log_error`. Undefined when the record
 * is no longer this run's to finish.
 */
export function endedRecord(
  record: SessionRecord,
  runN: number,
  exit: RunExit,
  facts: RunEndFacts,
  now = new Date(),
): SessionRecord | undefined {
  const ended = applyRunExit(record, runN, exit, now)
  if (!ended) return ended
  const withUsage = facts.usage ? recordUsage(ended, runN, facts.usage.logStart, facts.usage.usage) : ended
  return {
    ...withUsage,
    ...(facts.agentSessionId ? { agent_session_id: facts.agentSessionId } : {}),
    ...(facts.files ? { files_modified: facts.files } : {}),
    ...(facts.logError ? { log_error: facts.logError } : {}),
  }
}

/** The run's `log_offset` and `usage`, and the record's `cost` summed over its runs. */
function recordUsage(
  record: SessionRecord,
  runN: number,
  logStart: number,
  usage: Usage | null,
): SessionRecord {
  const runs = (record.runs ?? []).map((run) =>
    run.n === runN ? { ...run, log_offset: logStart, usage: usage && { ...usage } } : run,
  )
  const cost = sumCost(runs)
  return { ...record, runs, cost: cost && { ...cost } }
}

/**
 * The record once run `runN`'s agent has a pid (pure): on the run and the record, with its start time and,
 * for a run with a log, where this run's output starts in it. A pid is never written without its start time
 * (docs/security.md, "Liveness of a pid without a start time"): an agent already gone when it was to be recorded
 * is recorded as exited instead (`agent_exited`), so that a supervisor killed before it records the outcome
 * leaves a record that is verifiably stale. Undefined when the run is no longer the last.
 */
export function startedRecord(
  record: SessionRecord,
  runN: number,
  agent: { pid: number; startTime: string | null },
  logOffset: number | undefined,
): SessionRecord | undefined {
  const run = lastRun(record)
  if (!run || run.n !== runN) return undefined
  const runs = [...(record.runs ?? [])]
  const offset = logOffset === undefined ? {} : { log_offset: logOffset }
  if (!agent.startTime) {
    runs[runs.length - 1] = { ...run, pid: null, pid_start_time: null, agent_exited: true, ...offset }
    return { ...record, pid: null, runs }
  }
  runs[runs.length - 1] = { ...run, pid: agent.pid, pid_start_time: agent.startTime, ...offset }
  return { ...record, pid: agent.pid, runs }
}
