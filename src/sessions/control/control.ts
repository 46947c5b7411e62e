import { basename, join } from 'node:path'
import { type FSWatcher, watchDir } from '../../disk/door.js'
import { ExitCode, HarnessError, IllegalStateError, SessionNotFoundError } from '../../errors.js'
import type { Processes, RecordStore, SessionEnv } from '../ports.js'
import { getSession, resolveSessionId, seen } from '../query/query.js'
import { markPaused, reconcileView, type SessionView } from '../query/reconcile.js'
import { computeLiveness, type Liveness, lastRun, runProcesses } from '../record/liveness.js'
import { applyRunExit, signalExitCode } from '../record/outcome.js'
import type { SessionRecord, StopRequest } from '../record/schema.js'
import type { IntegrityProblem } from './integrity.js'

export type StopAction = 'kill' | 'pause'

export interface StopResult {
  record: SessionView
  /** This command's stop_request produced the final status (exit 0); otherwise exit 4. */
  produced: boolean
  action: StopAction
  /** How the agent was stopped: by its supervisor, or directly because the supervisor was gone. */
  via: 'supervisor' | 'direct' | 'none'
  /** The run the request was committed for. */
  run?: number
}

/**
 * Wakes a waiter when session `id`'s files in the sessions folder change (fs.watch), or after `ms` at the latest:
 * a watch event can be missed (network file systems, a full inotify table), so the caller looks again anyway.
 */
function watchRecord(store: RecordStore, id: string): { next(ms: number): Promise<void>; close(): void } {
  let wake: (() => void) | undefined
  let changed = false
  let watcher: FSWatcher | undefined
  try {
    watcher = watchDir(store.dir, (name) => {
      if (name !== null && !String(name).startsWith(id)) return
      changed = true
      wake?.()
    })
    watcher.on('error', () => {})
  } catch {
    // No watch here: the poll alone.
  }
  return {
    next: (ms) =>
      new Promise<void>((resolve) => {
        if (changed) {
          changed = false
          return resolve()
        }
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          wake = undefined
          changed = false
          resolve()
        }
        wake = done
      }),
    close: () => {
      try {
        watcher?.close()
      } catch {}
    },
  }
}

/**
 * `session kill` / `session pause` (docs/design.md, "Stopping"): commit a stop_request under the lock, ask the identity-checked
 * supervisor (SIGTERM), and wait for the final status; if the supervisor is gone, stop the identity-checked
 * agent tree directly and record the outcome.
 */
export async function stopSession(
  ctx: SessionEnv,
  input: string,
  action: StopAction,
  graceMs: number,
): Promise<StopResult> {
  const result = await stopRun(ctx, input, action, graceMs)
  await releaseTmuxSession(result.record, ctx.env)
  return result
}

/**
 * A run hosted in tmux ends its tmux session when its supervisor exits; one whose supervisor was gone or hung
 * may leave the session behind, which a finished run has no use for.
 */
async function releaseTmuxSession(record: SessionRecord, env: NodeJS.ProcessEnv): Promise<void> {
  if (record.status === 'RUNNING' || typeof record.tmux_session !== 'string') return
  const { killTmuxSession, tmuxSocket } = await import('../../process/tmux.js')
  await killTmuxSession(record.tmux_socket ?? tmuxSocket(env), record.tmux_session, env)
}

async function stopRun(
  ctx: SessionEnv,
  input: string,
  action: StopAction,
  graceMs: number,
): Promise<StopResult> {
  const store = await ctx.store()
  const session = await getSession(ctx, input)
  const id = session.id
  if (session.status !== 'RUNNING') {
    throw new IllegalStateError(
      `session "${id}" is ${session.status}, not running`,
      undefined,
      'SESSION_NOT_RUNNING',
    )
  }
  if (session.sealed === false) {
    const { ForeignSessionError } = await import('../record/seal.js')
    throw new ForeignSessionError(
      id,
      'signals the processes it names',
      session.seal_problem ?? undefined,
      'SESSION_UNVERIFIED',
    )
  }
  if (session.liveness === 'unverified') {
    throw new IllegalStateError(
      `session "${id}" cannot be verified (no process start times, or recorded on another host): it is never signalled`,
      `if it is really gone, run "harness session recover ${id}"`,
      'SESSION_UNVERIFIED',
    )
  }
  const { processes, clock } = ctx
  const request = stopRequest(action, graceMs, processes.selfPid, clock.now())
  const committed = await commitStopRequest(store, id, request)
  const ours = (record: SessionRecord) =>
    record.stop_request?.by_pid === request.by_pid && record.stop_request?.at === request.at
  if (committed.status !== 'RUNNING') return finish(committed, action, ours, 'none', lastRun(committed)?.n)

  const run = lastRun(committed)
  // The request is for this run only: once it has ended, a resume may have started another, which is not ours
  // to stop (its supervisor and agent are other processes, and the resume cleared the request).
  const runN = run?.n
  const ended = (record: SessionRecord | null) => record?.status !== 'RUNNING' || lastRun(record)?.n !== runN
  const { supervisor } = runProcesses(committed, run)
  let via: StopResult['via'] = 'supervisor'
  if (supervisor && processes.check(supervisor) === 'alive') {
    if (supervisor.pid === processes.selfPid) throw new IllegalStateError('a session cannot stop itself')
    processes.signal(supervisor.pid, 'SIGTERM')
    // The supervisor stops the tree within the grace period and records the outcome; allow a margin. Once its
    // agent is gone it is only recording (files_modified hashes the worktree, which takes a while in a large
    // one): wait for it longer rather than record an outcome without the agent's exit over it.
    const deadline = clock.now() + graceMs + 5000
    const patience = deadline + 60_000
    // The supervisor's final write wakes this wait at once; the poll covers a missed event.
    const changes = watchRecord(store, id)
    try {
      for (;;) {
        const current = store.get(id)
        if (ended(current)) return finish(current ?? committed, action, ours, via, runN)
        if (processes.check(supervisor) !== 'alive') break
        const now = clock.now()
        if (now > deadline && (now > patience || !agentGone(current, processes))) break
        await changes.next(25)
      }
    } finally {
      changes.close()
    }
  }
  via = 'direct'
  return finish(await stopDirectly(store, processes, id, runN, graceMs), action, ours, via, runN)
}

/** The request `kill` or `pause` commits: what, when, by whom, and the grace it asked for. */
export function stopRequest(
  action: StopAction,
  graceMs: number,
  byPid: number,
  nowMs: number,
): StopRequest & { grace_ms: number } {
  return { action, at: new Date(nowMs).toISOString(), by_pid: byPid, grace_ms: graceMs }
}

/**
 * Commits `request` to a RUNNING session that has none yet, and returns the record as it then stands. From
 * here on the stop no longer depends on its requester: the supervisor watching its record carries it out
 * (stop-watch.ts), even if the requester dies before it signals anyone.
 */
export function commitStopRequest(
  store: RecordStore,
  id: string,
  request: StopRequest,
): Promise<SessionRecord> {
  return store.update(id, (current) =>
    current.status === 'RUNNING' && !current.stop_request ? { ...current, stop_request: request } : undefined,
  )
}

/** The run's agent was started and is verifiably gone (a zombie not yet reaped counts as gone). */
function agentGone(record: SessionRecord | null, processes: Processes): boolean {
  if (record && lastRun(record)?.agent_exited) return true
  const agent = record ? runProcesses(record).agent : null
  return !!agent?.start_time && processes.check(agent) === 'dead'
}

/**
 * The supervisor is gone (or hung): stop the identity-checked agent tree of run `runN` ourselves and record the
 * outcome. A later run (the session was resumed meanwhile) is left alone.
 */
async function stopDirectly(
  store: RecordStore,
  processes: Processes,
  id: string,
  runN: number | undefined,
  graceMs: number,
): Promise<SessionRecord> {
  const record = store.get(id)
  if (!record) throw new SessionNotFoundError(id)
  const run = lastRun(record)
  // Never act on a record harness did not seal, even one swapped in while we waited (docs/security.md).
  if (record.status !== 'RUNNING' || run?.n !== runN || record.sealed === false) return record
  if (record.backend === 'container' && record.container) {
    // The engine's container is the agent: stopped through the engine, its identity verified first.
    const { stopContainerSession } = await import('../backends/settle.js')
    const stopped = await stopContainerSession(store, record, graceMs)
    if (stopped !== 'unverified') return stopped
    throw new IllegalStateError(
      `the container of session "${id}" is not the one its record names: it is never stopped`,
      `if the session is really gone, run "harness session recover ${id}"`,
      'SESSION_UNVERIFIED',
    )
  }
  let signal: string | null = null
  const { agent } = runProcesses(record, run)
  if (agent && processes.check(agent) === 'alive') {
    const outcome = await processes.stopTree(agent, { graceMs })
    signal = outcome.killed > 0 ? 'SIGKILL' : 'SIGTERM'
  }
  return store.update(id, (current) =>
    run ? applyRunExit(current, run.n, { exitCode: null, signal, stopped: signal !== null }) : undefined,
  )
}

function finish(
  record: SessionRecord,
  action: StopAction,
  ours: (record: SessionRecord) => boolean,
  via: StopResult['via'],
  run: number | undefined,
): StopResult {
  const wanted = action === 'kill' ? 'KILLED' : 'PAUSED'
  const sameRun = lastRun(record)?.n === run
  return { record, produced: sameRun && record.status === wanted && ours(record), action, via, run }
}

/** The error a stop command exits with when its request did not produce the final status. */
export function stopNotProduced(result: StopResult): HarnessError {
  const { record, action } = result
  const reason =
    lastRun(record)?.n !== result.run
      ? `the run it was meant for ended and the session was resumed meanwhile; it is ${record.status}`
      : record.status === 'RUNNING'
        ? 'it is still running'
        : record.stop_request && !result.produced
          ? `another ${record.stop_request.action} request came first; it is ${record.status}`
          : `it ended by itself first (${record.status}${record.exit_code != null ? `, exit ${record.exit_code}` : ''})`
  return new IllegalStateError(
    `session "${record.id}" was not ${action === 'kill' ? 'killed' : 'paused'}: ${reason}`,
  )
}

/** What `wait` exits with for a session PAUSED for these reasons (SPEC §8), when the record keeps no code. */
const PAUSED_EXIT_CODES: Record<string, number> = {
  budget: ExitCode.BudgetReached,
  timeout: ExitCode.Timeout,
  interrupt: 130,
  hangup: 129,
  terminated: 143,
}

/**
 * The exit code `session wait` reports for a finished session (README.md, "Exit codes"): its recorded code (an
 * interrupted run keeps 130, 129, 143 or 124); for a pause, 6 at its budget, else 4.
 */
export function waitExitCode(record: SessionRecord): number {
  if (typeof record.exit_code === 'number') return record.exit_code
  if (record.status === 'PAUSED') return PAUSED_EXIT_CODES[record.stop_reason ?? ''] ?? ExitCode.IllegalState
  return signalExitCode(lastRun(record)?.signal) ?? ExitCode.Failure
}

export class WaitTimeoutError extends HarnessError {
  constructor(id: string, ms: number) {
    super('WAIT_TIMEOUT', `session "${id}" still running after ${ms} ms`, ExitCode.Timeout)
  }
}

/**
 * A reading command never waits on what it cannot verify (docs/security.md, "Wait"): a foreign record's status is
 * a claim (a clone's RUNNING record would hold a CI job for ever, its COMPLETED one would pass it), and an
 * unverified RUNNING one has no process harness can see end. Checked at every look: a record swapped meanwhile
 * is refused too.
 */
async function refuseToWait(view: SessionView): Promise<void> {
  if (view.sealed !== true) {
    const { ForeignSessionError } = await import('../record/seal.js')
    throw new ForeignSessionError(view.id, 'waits on it', view.seal_problem ?? undefined)
  }
  if (view.status === 'RUNNING' && view.liveness === 'unverified') {
    throw new IllegalStateError(
      `session "${view.id}" cannot be verified (no process start times, or recorded on another host or pid namespace): harness never waits on it`,
      `if it is really gone, run "harness session recover ${view.id}"; then wait returns its status`,
      'SESSION_UNVERIFIED',
    )
  }
}

/** `session wait`: blocks until the session is no longer RUNNING (stale ones are reconciled on the way). */
export async function waitForSession(
  ctx: SessionEnv,
  input: string,
  timeoutMs?: number,
): Promise<SessionView> {
  const store = await ctx.store()
  const id = resolveSessionId(store, input)
  const { clock } = ctx
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : clock.now() + timeoutMs
  // The final write wakes the wait at once; the poll (backing off to 100 ms) covers a missed event.
  const changes = watchRecord(store, id)
  try {
    for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
      const view = await getSession(ctx, id)
      await refuseToWait(view)
      if (view.status !== 'RUNNING') return view
      if (clock.now() >= deadline) throw new WaitTimeoutError(id, timeoutMs ?? 0)
      const running = computeLiveness(view, seen(ctx)[0]) === 'running'
      if (view.backend === 'container' && view.sealed === true && !running) {
        // No supervisor: the engine knows when the container ends (the next read settles it).
        const { waitForContainer } = await import('../backends/settle.js')
        const left = Number.isFinite(deadline) ? Math.max(1, deadline - clock.now()) : undefined
        const code = await waitForContainer(view, left, ctx.env)
        if (code === undefined) await changes.next(Math.min(delay, Math.max(0, deadline - clock.now())))
        continue
      }
      await changes.next(Math.min(delay, Math.max(0, deadline - clock.now())))
    }
  } finally {
    changes.close()
  }
}

export interface RecoverCandidate {
  id: string
  /** For a RUNNING session whose liveness is stale, orphaned or unverified. */
  liveness?: Liveness
  status: string | null
  provider: string | null
  prompt?: string | null
  /** Its checkpoint chain and worktree (docs/continuity.md, "Recover: integrity"). */
  problems: IntegrityProblem[]
  /** A record file that does not parse or validate: `recover --all` moves it to `.harness/corrupt/`. */
  corrupt?: { path: string; reason: string }
}

/**
 * `session recover --scan` (read only): RUNNING sessions whose liveness is stale, orphaned or unverified;
 * sessions whose checkpoints or worktree are not as recorded; corrupt record files.
 */
export async function scanRecoverable(ctx: SessionEnv): Promise<RecoverCandidate[]> {
  const store = await ctx.store()
  const records = store.list()
  const { checkIntegrity } = await import('./integrity.js')
  const integrity = await checkIntegrity(records, ctx.env)
  const found: RecoverCandidate[] = []
  for (const record of records) {
    const liveness = record.status === 'RUNNING' ? computeLiveness(record, seen(ctx)[0]) : undefined
    const stuck = liveness && liveness !== 'running'
    const problems = integrity.get(record.id) ?? []
    if (!stuck && problems.length === 0) continue
    found.push({
      id: record.id,
      ...(stuck ? { liveness } : {}),
      status: record.status,
      provider: record.provider,
      prompt: record.prompt,
      problems,
    })
  }
  for (const corrupt of store.corruptRecords()) {
    const id = basename(corrupt.path, '.json')
    found.push({ id, status: null, provider: null, problems: [], corrupt })
  }
  return found.sort((a, b) => (a.id < b.id ? -1 : 1))
}

export interface RecoverResult {
  recovered: SessionView[]
  skipped: { id: string; liveness: Liveness | undefined; reason: string }[]
  /** What was repaired, per session. */
  repaired: { id: string; what: string[] }[]
  /** Problems `recover` cannot repair, per session (reported, left as they are). */
  unrepaired: { id: string; problems: IntegrityProblem[] }[]
  /** Corrupt records moved to `.harness/corrupt/` (by --all). */
  quarantined: { path: string; moved_to: string; report: string }[]
}

/**
 * `session recover <id>` / `--all`: marks stale and unverified sessions PAUSED (unverified ones on the user's
 * word), repairs checkpoint refs and worktrees where it can, and (--all) moves corrupt records that nothing
 * can repair to `.harness/corrupt/`. Orphaned and running sessions are not marked: their agent is alive and
 * must be killed first.
 */
export async function recoverSessions(
  ctx: SessionEnv,
  input: string | undefined,
  all: boolean,
): Promise<RecoverResult> {
  const store = await ctx.store()
  const scan = all ? await scanRecoverable(ctx) : []
  const ids = all ? scan.filter((c) => !c.corrupt).map((c) => c.id) : [resolveSessionId(store, input ?? '')]
  const result: RecoverResult = { recovered: [], skipped: [], repaired: [], unrepaired: [], quarantined: [] }
  const { checkIntegrity, repairIntegrity } = await import('./integrity.js')
  const paths = await ctx.project()
  const { allowedWorktreeRoots } = await import('../../config.js')
  const worktreeRoots = allowedWorktreeRoots(paths.root, paths.configFile, ctx.env)
  const [check, now] = seen(ctx)
  for (const id of ids) {
    let record = store.get(id)
    if (!record) continue
    let acted = false
    if (record.status === 'RUNNING') {
      const liveness = computeLiveness(record, check)
      if (liveness === 'stale') {
        record = await reconcileView(store, record, false, check, now)
        result.recovered.push(record)
        acted = true
      } else if (liveness === 'unverified') {
        record = await store.update(id, (current) =>
          current.status === 'RUNNING' && computeLiveness(current, check) === 'unverified'
            ? markPaused(current, 'recover', now)
            : undefined,
        )
        result.recovered.push(record)
        acted = true
      } else {
        const reason =
          liveness === 'orphaned'
            ? `its agent is still alive (orphaned): run "harness session kill ${id}" first`
            : 'it is running'
        if (!all)
          throw new IllegalStateError(
            `session "${id}" cannot be recovered: ${reason}`,
            undefined,
            'SESSION_ALIVE',
          )
        result.skipped.push({ id, liveness, reason })
      }
    }
    const problems = (await checkIntegrity([record], ctx.env)).get(id) ?? []
    if (problems.length) {
      const repair = await repairIntegrity(record, problems, { env: ctx.env, worktreeRoots })
      if (repair.repaired.length) result.repaired.push({ id, what: repair.repaired })
      if (repair.unrepaired.length) result.unrepaired.push({ id, problems: repair.unrepaired })
      acted = true
    }
    if (!acted && !all) {
      throw new IllegalStateError(
        `session "${id}" is ${record.status}, and its checkpoints and worktree are as recorded: nothing to recover`,
      )
    }
  }
  if (all) {
    const corruptDir = join(paths.harnessDir, 'corrupt')
    for (const candidate of scan) {
      if (!candidate.corrupt) continue
      const moved = await store.quarantine(candidate.id, corruptDir)
      if (moved) result.quarantined.push({ path: candidate.corrupt.path, ...moved })
    }
  }
  return result
}
