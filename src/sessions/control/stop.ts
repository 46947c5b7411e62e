import { type HarnessError, IllegalStateError, SessionNotFoundError } from '../../errors.js'
import { killTmuxSession, tmuxSocket } from '../../process/tmux.js'
import { backendOf } from '../backends/index.js'
import { settleEnded } from '../backends/settle.js'
import type { Processes, RecordStore, SessionEnv } from '../ports.js'
import { getSession } from '../query/query.js'
import type { SessionView } from '../query/reconcile.js'
import { lastRun, runProcesses } from '../record/liveness.js'
import type { SessionRecord, StopRequest } from '../record/schema.js'
import { ForeignSessionError } from '../record/seal.js'
import { actEnvOf, settleIfEnded } from './settle.js'
import { watchRecord } from './watch.js'

export type StopAction = 'kill' | 'pause'

export interface StopResult {
  record: SessionView
  /** This command's stop_request produced the final status (exit 0); otherwise exit 4. */
  produced: boolean
  action: StopAction
  /**
   * How the agent was stopped: by its supervisor; directly (by its backend) because its supervisor was gone; or
   * through its engine, when no supervisor of harness's ran it (a Slurm job: the cluster supervises).
   */
  via: 'supervisor' | 'direct' | 'engine' | 'none'
  /** The run the request was committed for. */
  run?: number
}

/**
 * `session kill` / `session pause` (docs/development/design.md, "Stopping"): commit a stop_request under the lock, ask the
 * identity-checked supervisor (SIGTERM), and wait for the final status; without a supervisor of harness's (it is
 * gone, or the engine supervises: a container whose client died, a Slurm job), its backend stops what the record
 * names, identity verified first, and the outcome is recorded.
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
  await killTmuxSession(record.tmux_socket ?? tmuxSocket(env), record.tmux_session, env)
}

/** The session to stop, settled first if its run already ended (an acting command settles what it acts on). */
async function stoppable(ctx: SessionEnv, input: string): Promise<SessionView> {
  const view = await getSession(ctx, input)
  if (!view.unsettled) return view
  const store = await ctx.store()
  const record = store.get(view.id)
  return record ? settleIfEnded(ctx, record) : view
}

async function refuseToStop(session: SessionView): Promise<void> {
  const id = session.id
  if (session.status !== 'RUNNING') {
    throw new IllegalStateError(
      `session "${id}" is ${session.status}, not running`,
      undefined,
      'SESSION_NOT_RUNNING',
    )
  }
  if (session.sealed === false) {
    throw new ForeignSessionError(
      id,
      'signals the processes it names',
      session.seal_problem ?? undefined,
      'SESSION_UNVERIFIED',
    )
  }
  if (session.liveness === 'unverified') {
    throw new IllegalStateError(
      `session "${id}" cannot be verified (no process start times, recorded on another host, or its engine cannot say): it is never signalled`,
      `if it is really gone, run "harness session recover ${id}"`,
      'SESSION_UNVERIFIED',
    )
  }
}

async function stopRun(
  ctx: SessionEnv,
  input: string,
  action: StopAction,
  graceMs: number,
): Promise<StopResult> {
  const store = await ctx.store()
  const session = await stoppable(ctx, input)
  await refuseToStop(session)
  const id = session.id
  const { processes, clock } = ctx
  const request = stopRequest(action, graceMs, processes.selfPid, clock.now())
  const committed = await commitStopRequest(store, id, request)
  const ours = (record: SessionRecord) =>
    record.stop_request?.by_pid === request.by_pid && record.stop_request?.at === request.at
  if (committed.status !== 'RUNNING') return finish(committed, action, ours, 'none', lastRun(committed)?.n)
  // The request is for this run only: once it has ended, a resume may have started another, which is not ours
  // to stop (its supervisor and agent are other processes, and the resume cleared the request).
  const runN = lastRun(committed)?.n
  const viaSupervisor = await throughSupervisor(ctx, store, committed, graceMs)
  if (viaSupervisor) return finish(viaSupervisor, action, ours, 'supervisor', runN)
  const via = runProcesses(committed).supervisor ? 'direct' : 'engine'
  return finish(await stopDirectly(ctx, store, id, runN, graceMs), action, ours, via, runN)
}

/**
 * The run's own supervisor, alive, is asked (SIGTERM) and waited for: the final record once it ended the run;
 * null when there is none, or it died or hung, so that the stop goes on without it.
 */
async function throughSupervisor(
  ctx: SessionEnv,
  store: RecordStore,
  committed: SessionRecord,
  graceMs: number,
): Promise<SessionRecord | null> {
  const { processes, clock } = ctx
  const id = committed.id
  const runN = lastRun(committed)?.n
  const ended = (record: SessionRecord | null) => record?.status !== 'RUNNING' || lastRun(record)?.n !== runN
  const { supervisor } = runProcesses(committed)
  if (!supervisor || processes.check(supervisor) !== 'alive') return null
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
      if (ended(current)) return current ?? committed
      if (processes.check(supervisor) !== 'alive') return null
      const now = clock.now()
      if (now > deadline && (now > patience || !agentGone(current, processes))) return null
      await changes.next(25)
    }
  } finally {
    changes.close()
  }
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
 * No supervisor of harness's stops run `runN` (it is gone or hung, or the engine supervises): its backend stops
 * what the record names, identity verified first (grace, then force), and the outcome is recorded with the work
 * collected. A later run (the session was resumed meanwhile) is left alone.
 */
async function stopDirectly(
  ctx: SessionEnv,
  store: RecordStore,
  id: string,
  runN: number | undefined,
  graceMs: number,
): Promise<SessionRecord> {
  const record = store.get(id)
  if (!record) throw new SessionNotFoundError(id)
  // Never act on a record harness did not seal, even one swapped in while we waited (docs/security.md).
  if (record.status !== 'RUNNING' || lastRun(record)?.n !== runN || record.sealed !== true) return record
  const backend = await backendOf(record)
  const env = await actEnvOf(ctx)
  const outcome = await backend.stop(record, graceMs, env)
  if (outcome.kind === 'unverified') {
    throw new IllegalStateError(
      `what session "${id}" runs on (${backend.identity(record) ?? 'nothing recorded'}) is not what its record names: it is never stopped`,
      `if the session is really gone, run "harness session recover ${id}"`,
      'SESSION_UNVERIFIED',
    )
  }
  return settleEnded(backend, record, outcome.exit, env)
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
