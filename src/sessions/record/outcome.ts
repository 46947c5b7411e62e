import { constants } from 'node:os'
import type { Usage } from '../../history/events.js'
import { sumCost } from '../../history/usage.js'
import type { AgentExit, AgentLaunch } from '../../process/supervisor.js'
import { boundFiles } from './bounds.js'
import { type SessionEvent, transition } from './lifecycle.js'
import { lastRun } from './liveness.js'
import type { Run, SessionRecord, SessionStatus, StopRequest } from './schema.js'

/** How a run ended, as the supervisor saw it. */
export interface RunExit {
  exitCode: number | null
  signal: string | null
  /**
   * The signal that interrupted the run, as the supervisor received it (SIGINT: Ctrl-C, SIGHUP: the terminal
   * closed, SIGTERM without a stop_request; `interruptionOf`): the run is PAUSED, whichever of harness and the
   * agent saw it first. A committed stop_request decides instead.
   */
  interruptedBy?: string | null
  /**
   * The stop signalled the agent. A stop_request decides the status only then: an agent that exited by itself
   * first gets its own status, and the request is cleared (docs/security.md).
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
  /**
   * The engine ended the run for a reason of its own that is a pause, not an ending (SPEC §14: a Slurm job past
   * its time limit is PAUSED `timeout`; one whose node failed or that was preempted is PAUSED `interrupted`).
   */
  pausedFor?: 'timeout' | 'interrupted'
  /** The run's work could not be brought back (the backend's collection failed): not a success. */
  collectFailed?: boolean
}

/** 128+n for a signal, as shells report it. */
export function signalExitCode(signal: string | null | undefined): number | null {
  if (!signal) return null
  const n = (constants.signals as Record<string, number>)[signal]
  return n === undefined ? null : 128 + n
}

/** What `run --timeout` exits with, and what a session PAUSED by it keeps as its exit code (SPEC §8). */
export const TIMEOUT_EXIT_CODE = 124

/**
 * The stop_reason of a run interrupted by the signal the supervisor received (docs/development/design.md,
 * "Interrupts").
 */
function interruptReason(signal: string): string {
  if (signal === 'SIGINT') return 'interrupt'
  if (signal === 'SIGHUP') return 'hangup'
  if (signal === 'SIGTERM') return 'terminated'
  return 'interrupted'
}

/** The stop_reason of a pause that harness asked for itself (the request's reason), or of `session pause`. */
function pauseReason(request: StopRequest): string {
  return request.reason === 'budget' || request.reason === 'timeout' ? request.reason : 'paused'
}

/**
 * The committed stop_request that decides the run's end, if any: one the stop carried out (it signalled the
 * agent), or one the agent died under by a signal, whoever sent it (the requester stopping it directly while the
 * supervisor was slow, or the agent's group killed meanwhile): the request was committed before that exit. An
 * agent that exited by itself (an exit code) before the stop reached it keeps its own status.
 */
function decidingRequest(record: SessionRecord, exit: RunExit): StopRequest | null {
  const request = record.stop_request ?? null
  return exit.stopped || (request && exit.signal && !exit.spawnError) ? request : null
}

/** The event and stop_reason of a run's end: the rule itself (see `applyRunExit`). */
function decideEnd(record: SessionRecord, exit: RunExit): { event: SessionEvent; stopReason: string } {
  const request = decidingRequest(record, exit)
  if (request?.action === 'kill') return { event: 'kill', stopReason: 'killed' }
  if (request?.action === 'pause') return { event: 'pause', stopReason: pauseReason(request) }
  if (exit.interruptedBy && !record.stop_request) {
    return { event: 'interrupt', stopReason: interruptReason(exit.interruptedBy) }
  }
  if (exit.spawnError) return { event: 'exit-error', stopReason: 'start-failed' }
  if (exit.pausedFor && !request) return { event: 'pause', stopReason: exit.pausedFor }
  const success = exit.exitCode === 0 && !exit.signal
  if (exit.budgetReached && !(success && !exit.reportedError)) return { event: 'pause', stopReason: 'budget' }
  if (success && exit.reportedError) return { event: 'exit-error', stopReason: 'agent-error' }
  // The agent succeeded but its work could not be brought back (a container run's commits): not a success.
  if (success && (exit.collectFailed || collectFailed(record)))
    return { event: 'exit-error', stopReason: 'collect-failed' }
  if (success) return { event: 'exit-ok', stopReason: 'exited' }
  return { event: 'exit-error', stopReason: exit.signal ? 'signal' : 'exit-code' }
}

/**
 * The session's exit code once the run ended: the agent's (128+n for a signal); for a pause, none (`session
 * wait` then exits 4, or 6 for the budget), but the code the run exits with when it was interrupted by a
 * signal (130, 129, 143) or its `--timeout` (124), so that `wait` exits with it too.
 */
function sessionExitCode(
  status: SessionStatus,
  stopReason: string,
  exit: RunExit,
  event: SessionEvent,
): number | null {
  if (event === 'interrupt') return signalExitCode(exit.interruptedBy)
  if (status === 'PAUSED') return stopReason === 'timeout' ? TIMEOUT_EXIT_CODE : null
  // A reported failure keeps the run's true exit code (0) but the session's is 1, so `wait` and scripts see it.
  if (stopReason === 'agent-error' || stopReason === 'collect-failed') return 1
  return exit.exitCode ?? signalExitCode(exit.signal)
}

/**
 * The final status of a run (docs/development/design.md, "Runs and the supervisor"), decided under the
 * record's lock: a committed stop_request wins (kill → KILLED, pause → PAUSED) even if the agent happened to
 * exit by itself at the same moment; that is what makes "KILLED exactly when the kill's request was committed
 * first" hold. A signal that interrupted the supervisor (Ctrl-C, a hang-up, SIGTERM without a request) makes
 * the run PAUSED, whichever process died first. Returns undefined when the record is no longer this run's to
 * finish (someone else already did).
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
  const request = decidingRequest(record, exit)
  const { event, stopReason } = decideEnd(record, exit)
  const status = transition(record.status, event, record.id)
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
    exit_code: sessionExitCode(status, stopReason, exit, event),
    stop_reason: stopReason,
    completed_at: status === 'PAUSED' ? null : at,
    runs,
    // A request that did not stop the agent (it exited by itself first) is not carried into the next run.
    ...(record.stop_request && !request ? { stop_request: null } : {}),
    // The agent's screen state describes a live run only.
    ...(record.state != null ? { state: null } : {}),
  }
}

/**
 * The signal that interrupted the run, from what the supervisor saw (pure; docs/development/design.md,
 * "Interrupts"):
 * - a stop signal harness itself received (SIGTERM, SIGHUP; SIGINT in the background; any before the agent
 *   started), or, interactive, its terminal hung up by the time the agent ended (the agent saw it first);
 * - in the foreground, an agent that died of SIGINT, or (interactive, where the agent may hold the terminal in
 *   raw mode so that harness receives nothing) exited 130;
 * - in the foreground, a Ctrl-C harness received while the agent ran, unless the agent then exited 0: Ctrl-C
 *   belongs to the agent there, which may use it to cancel a step and go on until the user quits it.
 */
export function interruptionOf(exit: AgentExit, mode: RunMode): string | null {
  if (exit.stopSignal) return exit.stopSignal
  if (exit.hungUp) return 'SIGHUP'
  if (mode === 'background') return null
  if (exit.signal === 'SIGINT' || (mode === 'interactive' && exit.exitCode === 130)) return 'SIGINT'
  if (exit.keyboardInterrupt && !(exit.exitCode === 0 && !exit.signal)) return 'SIGINT'
  return null
}

/** How the agent ran: in the terminal, in the foreground without one, or in the background. */
export type RunMode = AgentLaunch['mode']

/**
 * The run's work could not be collected (a container run whose commits did not come back, a Slurm job's bundle:
 * docs/backends.md): the record's backend facts are this run's, set when it was settled, before its exit is
 * applied.
 */
function collectFailed(record: SessionRecord): boolean {
  return record.container?.collected?.kind === 'failed' || record.slurm?.collected?.kind === 'failed'
}

/** The run's exit as `applyRunExit` takes it, from how the supervisor saw the agent end (pure). */
export function runExitOf(exit: AgentExit, reportedError: string | undefined, mode: RunMode): RunExit {
  return {
    exitCode: exit.exitCode,
    signal: exit.signal,
    interruptedBy: interruptionOf(exit, mode),
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
  /** Paths changed against the base commit, and which were added or deleted; undefined when git could not tell. */
  files?: { files: string[]; added: string[]; deleted: string[] }
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
    ...(facts.files ? filesModified(facts.files) : {}),
    ...(facts.logError ? { log_error: facts.logError } : {}),
  }
}

/**
 * `files_modified`, bounded (an agent can make any number of files): the first of them, and how many; with
 * which of those it added and deleted (the rest it modified).
 */
export function filesModified(files: {
  files: readonly string[]
  added: readonly string[]
  deleted: readonly string[]
}): Pick<SessionRecord, 'files_modified' | 'files_modified_total' | 'files_added' | 'files_deleted'> {
  const { kept, total } = boundFiles(files.files)
  const listed = new Set(kept)
  return {
    files_modified: kept,
    // Not null when all are listed: a record written without the cut stays as it was.
    files_modified_total: kept.length < total ? total : undefined,
    files_added: files.added.filter((file) => listed.has(file)),
    files_deleted: files.deleted.filter((file) => listed.has(file)),
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
 * (docs/record.md, "Liveness"): an agent already gone when it was to be recorded
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
