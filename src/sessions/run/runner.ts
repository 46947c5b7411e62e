import { join } from 'node:path'
import { closeFd, ensureDir, fdSize, openLogForAppend, unlinkQuiet, writeZerosFile } from '../../disk/door.js'
import { DiskFaultError, ExternalToolError } from '../../errors.js'
import { type LongTimer, longTimeout } from '../../long-timer.js'
import { checkIdentity, identify, type ProcessIdentity } from '../../process/identity.js'
import type { LogWriteFailure, OutputSink } from '../../process/pipes.js'
import { type AgentExit, type AgentLaunch, superviseAgent } from '../../process/supervisor.js'
import { logPathFor } from '../../project.js'
import { releaseMemory } from '../../runtime.js'
import type { RunHost } from '../backends/backend.js'
import { budgetReached, runCostUsd, withPricedCost } from '../budget.js'
import { RecordTooBigError } from '../record/bounds.js'
import { lastRun } from '../record/liveness.js'
import { applyRunExit, endedRecord, runExitOf, startedRecord } from '../record/outcome.js'
import type { Run, SessionRecord, StopRequest } from '../record/schema.js'
import { RecordSealer } from '../record/seal.js'
import { statusHookObserver } from '../record/status-hooks.js'
import { SessionStore } from '../record/store.js'
import { learnAgentSessionId } from './agent-id.js'
import { capturedSessionId, earlierRunsUsage, reportedFailure, runUsage, watchBudget } from './agent-log.js'
import { DEFAULT_GRACE_MS, parseRunPlan, type RunPlan } from './run-plan.js'
import { type StopWatch, watchDeadline, watchStopRequest } from './stop-watch.js'

// The plan's shape lives with its builder; the supervisor's callers name it here.
export { DEFAULT_GRACE_MS, type RunPlan } from './run-plan.js'

/**
 * The store a supervisor writes through: it runs `hooks.on_status` for the changes this process makes. A
 * background supervisor (detached, tmux) waits for each hook up to its deadline, so the deadline holds; a
 * foreground run, whose user waits, only a few seconds.
 */
export async function supervisorStore(plan: RunPlan): Promise<SessionStore> {
  const env = plan.supervisorEnv ?? plan.env
  const sealer = RecordSealer.forEnv(env)
  if (!plan.onStatus?.length) return new SessionStore(plan.sessionsDir, { sealer, env })
  return new SessionStore(plan.sessionsDir, {
    sealer,
    env,
    onChange: statusHookObserver(plan.onStatus, plan.logsDir, env, plan.mode === 'background' || !!plan.tmux),
  })
}

/** What a supervisor may add around the agent's life (the tmux one watches the screen). */
export interface SuperviseExtras {
  /** The agent runs and its pid is recorded. */
  started?(): void
  /** The agent is gone; called before the outcome is recorded. */
  ended?(): Promise<void>
  /** Headless: where the agent's output is copied besides the log (the CLI's stdout, or stderr under --json). */
  tee?: OutputSink
}

/** Commits the run's start (create for a new session, update for a resume) holding the supervisor's identity. */
export type BeginRun = (run: Run) => Promise<SessionRecord>

export interface RunResult {
  record: SessionRecord
  exit?: AgentExit
}

/** A run entry as first written: the supervisor is known, the agent not yet. */
function newRun(
  n: number,
  kind: 'start' | 'resume',
  supervisor: ProcessIdentity,
  args: string[],
  detached: boolean,
): Run {
  return {
    n,
    kind,
    pid: null,
    pid_start_time: null,
    supervisor_pid: supervisor.pid,
    supervisor_start_time: supervisor.start_time,
    args,
    started_at: new Date().toISOString(),
    ended_at: null,
    exit_code: null,
    signal: null,
    hostname: supervisor.hostname,
    boot_id: supervisor.boot_id,
    pid_namespace: supervisor.pid_namespace,
    detached,
  }
}

export function openLog(plan: RunPlan): number {
  ensureDir(plan.logsDir)
  // Never through a symlink put in the log's place, never a FIFO (docs/security.md).
  return openLogForAppend(logPathFor(plan.logsDir, plan.id))
}

/**
 * Supervises one run in this process: commits it (`begin`, which returns the log to use, once the signal
 * handlers are in place), records the agent's pid, stops its tree when harness is told to stop, and records the
 * outcome (before anything is printed).
 */
export async function supervise(
  plan: RunPlan,
  store: SessionStore,
  begin: () => Promise<number | undefined>,
  extras: SuperviseExtras = {},
): Promise<RunResult> {
  const launch: AgentLaunch = {
    command: plan.command,
    args: plan.args,
    cwd: plan.cwd,
    env: plan.env,
    mode: plan.mode,
    tee: plan.mode === 'headless' ? extras.tee : undefined,
  }
  let logStart = 0
  // The run's end (collecting, checkpoints, files_modified) is given up when a stop is asked for after the
  // agent exited: a git hung on what the agent left never holds the run for good.
  const ending = new AbortController()
  const interval = intervalCheckpoints(plan, store, ending.signal)
  const stopRequested = new AbortController()
  let agentExited = false
  let requested: StopRequest | undefined
  const onRequest = (request: StopRequest) => {
    requested = request
    stopRequested.abort()
    if (agentExited) ending.abort()
  }
  let stopWatch: StopWatch | undefined
  let limits: StopWatch[] = []
  let reserve: SpaceReserve | undefined
  let supervised: Awaited<ReturnType<typeof superviseAgent>>
  try {
    supervised = await superviseAgent(launch, {
      beforeSpawn: async () => {
        launch.logFd = await begin()
        logStart = launch.logFd === undefined ? 0 : fdSize(launch.logFd)
        // From the moment the run is committed: a kill that dies before signalling us is still carried out.
        stopWatch = watchStopRequest(store, plan.id, plan.runN, onRequest)
        limits = runLimits(plan, store, launch.logFd, logStart, onRequest)
        if (launch.logFd !== undefined) reserve = reserveSpace(plan)
      },
      started: async (pid, identity) => {
        const logOffset = launch.logFd === undefined ? undefined : logStart
        await store.update(plan.id, (current) =>
          startedRecord(current, plan.runN, { pid, startTime: identity?.start_time ?? null }, logOffset),
        )
        extras.started?.()
      },
      stopping: async () => {
        // The request the watch just read says it; a stop by signal alone reads the record for one.
        const grace = (requested ?? store.get(plan.id)?.stop_request)?.grace_ms
        return { graceMs: typeof grace === 'number' && grace >= 0 ? grace : DEFAULT_GRACE_MS }
      },
      stopRequested: stopRequested.signal,
    })
  } catch (error) {
    stopWatch?.close()
    reserve?.release()
    await interval.stop() // a run whose record was refused (a name taken meanwhile) must not live on its timer
    throw error
  } finally {
    for (const limit of limits) limit.close()
  }
  agentExited = true
  try {
    const run = { logFd: launch.logFd, logStart, reserve, signal: ending.signal }
    return await endRun(plan, store, supervised.exit, { ...run, ended: extras.ended, interval })
  } finally {
    stopWatch?.close()
    reserve?.release()
    supervised.release()
  }
}

/**
 * What stops the run while its agent runs, besides a signal or a stop request: its `--timeout` (any length:
 * long-timer.ts) and its budget, each as a pause request harness commits itself.
 */
function runLimits(
  plan: RunPlan,
  store: SessionStore,
  logFd: number | undefined,
  logStart: number,
  onRequest: (request: StopRequest) => void,
): StopWatch[] {
  const limits: StopWatch[] = []
  if (plan.timeoutMs) {
    const deadline = { ms: plan.timeoutMs, graceMs: DEFAULT_GRACE_MS, pid: process.pid }
    limits.push(watchDeadline(store, plan.id, plan.runN, deadline, onRequest))
  }
  if (logFd !== undefined && plan.budget) limits.push(watchBudget(plan, store, logFd, logStart, onRequest))
  return limits
}

/** Once the agent has exited: its work collected (a container run), the run-end steps, the outcome recorded. */
async function endRun(
  plan: RunPlan,
  store: SessionStore,
  exit: AgentExit,
  run: Omit<Parameters<typeof recordOutcome>[3], 'settled' | 'released'> & {
    ended: SuperviseExtras['ended']
    interval: { stop(): Promise<void> }
  },
): Promise<RunResult> {
  await run.ended?.()
  const { settleRun } = await runEnd()
  const { change: settled, released } = await settleRun(plan, store, exit, run.signal)
  await run.interval.stop()
  const record = await recordOutcome(plan, store, exit, { ...run, settled, released })
  return { record, exit }
}

/**
 * Gathers what the run left (the run-end checkpoint, the log's usage, captured id and reported failure, the
 * changed files) and records the outcome (`endedRecord`), before anything is printed.
 */
async function recordOutcome(
  plan: RunPlan,
  store: SessionStore,
  exit: AgentExit,
  run: {
    logFd: number | undefined
    logStart: number
    reserve: SpaceReserve | undefined
    /** The record with how a container run's work was collected (run-end.ts). */
    settled: (record: SessionRecord) => SessionRecord
    /** What the backend still releases (a container's removal): done before the outcome is written. */
    released: Promise<unknown>
    signal: AbortSignal
  },
): Promise<SessionRecord> {
  const { logFd, logStart, reserve, settled, signal } = run
  const { changedFiles, checkpointQuietly, worktreeAtEnd } = await runEnd()
  // Side by side with reading the log: the checkpoint before the outcome is recorded, so that whoever waits for
  // the session finds it there. The worktree is read once (three git processes) for both the run-end
  // checkpoint and files_modified. A container's removal (run-end.ts) ends meanwhile too.
  const worktree = worktreeAtEnd(plan, signal)
  const [, captured, read, reportedError, files] = await Promise.all([
    worktree.then((state) => checkpointQuietly(plan, store, 'run-end', state, signal)),
    // Else from the agent's own session list (opencode's interactive runs): sessions/run/agent-id.ts.
    capturedSessionId(plan, logFd, logStart).then((id) => id ?? learntSessionId(plan, store)),
    runUsage(logFd, logStart, earlierRunsUsage(plan, store), plan.headlessOutput ?? null),
    exit.exitCode === 0 ? reportedFailure(plan, logFd, logStart) : undefined,
    worktree.then((state) => changedFiles(plan, state, signal)),
    run.released,
  ])
  const logError = exit.logFailure && describeLogFailure(exit.logFailure)
  const usage = withPricedCost(read.usage, plan.pricing ?? null)
  // The agent stopped at the budget itself (claude's --max-budget-usd), or its output shows it reached it.
  const spent = runCostUsd(usage, plan.pricing ?? null) ?? 0
  const reached = read.budgetExceeded || (!!plan.budget && budgetReached(plan.budget, spent))
  const runExit = { ...runExitOf(exit, reportedError, plan.mode), budgetReached: reached }
  // The room kept for this write: a log that filled the disk must not cost the run its outcome.
  reserve?.release()
  try {
    return await store.update(plan.id, (current) =>
      endedRecord(settled(current), plan.runN, runExit, {
        usage: logFd === undefined ? undefined : { logStart, usage },
        agentSessionId: captured,
        files,
        logError,
      }),
    )
  } catch (error) {
    if (!(error instanceof DiskFaultError) && !(error instanceof RecordTooBigError)) throw error
    // Still no room for the whole record (on the disk, or under the size a record may have): the outcome alone,
    // which is what must not be lost.
    return store.update(plan.id, (current) => {
      const ended = applyRunExit(settled(current), plan.runN, runExit)
      return ended && { ...ended, log_error: logError ?? `the run's record was cut short: ${error.message}` }
    })
  }
}

/** What `log_error` says: from where the log is incomplete, and why. */
function describeLogFailure(failure: LogWriteFailure): string {
  const why = failure.code === 'ENOSPC' || failure.code === 'EDQUOT' ? 'the disk is full' : failure.message
  return `the log is incomplete: it could not be written after ${failure.written} bytes of this run's output (${failure.code}: ${why})`
}

/** Room on the log's file system, held for the run's last record update (see `reserveSpace`). */
interface SpaceReserve {
  release(): void
}

const RESERVE_BYTES = 64 * 1024

/**
 * Holds `RESERVE_BYTES` of the log's file system (a file of zeros beside the log) while the agent runs, so that
 * an agent whose output fills the disk still leaves room to record how it ended. Best effort: a disk already
 * too full for it runs without.
 */
function reserveSpace(plan: RunPlan): SpaceReserve | undefined {
  const path = join(plan.logsDir, `${plan.id}.reserve`)
  // Written is held: file systems count the blocks of written data against free space at write time (delayed
  // allocation reserves them then), so no fsync is needed for the room to be ours until the file is removed.
  if (!writeZerosFile(path, RESERVE_BYTES)) return undefined
  let held = true
  return {
    release() {
      if (!held) return
      held = false
      unlinkQuiet(path)
    },
  }
}

/**
 * What the end of a run does (run-end.ts: the worktree read with git, the checkpoint, a backend's settle), loaded
 * when a run ends or takes an interval checkpoint: a supervisor whose agent runs holds none of it
 * (docs/development/design.md).
 */
const runEnd = () => import('./run-end.js')

/**
 * Every `intervalMs` while the agent runs: a checkpoint if the worktree changed. One at a time; the next
 * interval starts when the previous checkpoint is done, so a slow one never piles up.
 */
function intervalCheckpoints(
  plan: RunPlan,
  store: SessionStore,
  ending: AbortSignal,
): { stop(): Promise<void> } {
  const intervalMs = plan.checkpoints?.intervalMs ?? 0
  if (intervalMs <= 0) return { stop: async () => {} }
  let stopped = false
  let timer: LongTimer | undefined
  let wake: (() => void) | undefined
  const loop = (async () => {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        wake = resolve
        // Any length: `checkpoint.interval: 30d` is past what one timer holds.
        timer = longTimeout(resolve, intervalMs)
      })
      if (stopped) return
      const { checkpointQuietly } = await runEnd()
      await checkpointQuietly(plan, store, 'interval', undefined, ending)
    }
  })()
  return {
    async stop() {
      stopped = true
      timer?.clear()
      wake?.()
      await loop
    },
  }
}

/** A foreground run: harness is the supervisor and exits with the agent's code. */
export async function runInForeground(
  plan: RunPlan,
  beginRun: BeginRun,
  tee: OutputSink,
): Promise<RunResult> {
  const self = identify(process.pid)
  if (!self) throw new Error('cannot read this process identity')
  const store = await supervisorStore(plan)
  let logFd: number | undefined
  try {
    return await supervise(
      plan,
      store,
      async () => {
        await beginRun(newRun(plan.runN, plan.kind, self, [plan.command, ...plan.args], false))
        if (plan.mode !== 'interactive') logFd = openLog(plan)
        return logFd
      },
      { tee },
    )
  } finally {
    if (logFd !== undefined) closeFd(logFd)
  }
}

/**
 * A background run: starts the detached supervisor, commits the run with its identity, hands it the plan,
 * and returns once the record holds the agent's pid (or the run already ended).
 */
export async function runInBackground(
  plan: RunPlan,
  beginRun: BeginRun,
  env: NodeJS.ProcessEnv,
  host: RunHost,
): Promise<SessionRecord> {
  const supervisor = await host.startSupervisor(env)
  let committed = false
  try {
    await beginRun(newRun(plan.runN, plan.kind, supervisor.identity, [plan.command, ...plan.args], true))
    committed = true
    supervisor.send(plan)
  } finally {
    if (!committed) supervisor.abandon()
  }
  const store = new SessionStore(plan.sessionsDir, {
    sealer: RecordSealer.forEnv(plan.supervisorEnv ?? plan.env),
  })
  return waitForAgentStart({
    read: () => store.get(plan.id),
    supervisorGone: () => checkIdentity(supervisor.identity) === 'dead',
    plan,
  })
}

/** How long a live supervisor may take to start the agent before the launcher gives up on it. */
const AGENT_START_DEADLINE_MS = 120_000

/**
 * Waits until the record holds the agent's pid or the run ended. The supervisor's death is checked before the
 * record is read: a short agent may start, end and be settled between a read and a liveness check, so only a
 * read made after the supervisor was seen dead may conclude that it died without starting the agent.
 */
export async function waitForAgentStart(watch: {
  read(): SessionRecord | null | undefined
  supervisorGone(): boolean
  plan: Pick<RunPlan, 'id' | 'runN'>
  now?: () => number
  deadlineMs?: number
}): Promise<SessionRecord> {
  const { plan } = watch
  const now = watch.now ?? Date.now
  const deadline = now() + (watch.deadlineMs ?? AGENT_START_DEADLINE_MS)
  for (let delay = 2; ; delay = Math.min(delay * 2, 20)) {
    const gone = watch.supervisorGone()
    const record = watch.read()
    const run = record && lastRun(record)
    const started = run?.pid || run?.agent_exited
    if (record && (record.status !== 'RUNNING' || !run || run.n !== plan.runN || started)) return record
    if (gone) {
      throw new ExternalToolError(
        `the background supervisor of session "${plan.id}" stopped before starting the agent`,
        `see "harness session logs ${plan.id}"`,
        'SUPERVISOR_FAILED',
      )
    }
    if (now() > deadline) {
      throw new ExternalToolError(
        `the background supervisor of session "${plan.id}" has not started the agent after ${Math.round((watch.deadlineMs ?? AGENT_START_DEADLINE_MS) / 1000)} s; it is still running`,
        `see "harness session show ${plan.id}"; "harness session kill ${plan.id}" stops it`,
        'SUPERVISOR_FAILED',
      )
    }
    await new Promise((resolve) => setTimeout(resolve, delay))
  }
}

/** The hidden `__supervise` command: the detached supervisor's whole life. */
export async function superviseDetached(input: string): Promise<void> {
  if (!input.trim()) return // the launcher gave up before committing the run
  const plan = parseRunPlan(input)
  const store = await supervisorStore(plan)
  const record = store.get(plan.id)
  const run = record ? lastRun(record) : undefined
  // Only the supervisor the record names may run it.
  if (record?.status !== 'RUNNING' || run?.n !== plan.runN || run.supervisor_pid !== process.pid) return
  let logFd: number | undefined
  try {
    // The launcher committed the run already.
    await supervise(
      { ...plan, mode: 'background' },
      store,
      async () => {
        logFd = openLog(plan)
        return logFd
      },
      { started: releaseMemory },
    )
  } finally {
    if (logFd !== undefined) closeFd(logFd)
  }
}

/** The agent's session id from its own session list, where its output names none (sessions/run/agent-id.ts). */
async function learntSessionId(plan: RunPlan, store: SessionStore): Promise<string | undefined> {
  const startedAt = store.get(plan.id)?.runs?.find((run) => run.n === plan.runN)?.started_at
  return learnAgentSessionId(plan, startedAt).catch(() => undefined)
}
