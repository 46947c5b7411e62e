import { assertExecutable } from '../../../process/supervisor.js'
import { logPathFor } from '../../../project.js'
import { computeLiveness, lastRun, runProcesses } from '../../record/liveness.js'
import type { SessionRecord } from '../../record/schema.js'
import type { ActEnv, BackendState, RunHost, RunRequest, SessionBackend, StopOutcome } from '../backend.js'
import { FULL_SUPPORT } from '../backend.js'
import { detachedHost, tmuxHost } from './host.js'

/**
 * This machine (docs/backends.md): the agent is a process a supervisor of harness's spawns itself, in the
 * foreground, detached, or in a tmux pane (host.ts); its identity is pid + start time (process/identity.ts); its
 * liveness comes from one look at the process table; a stop without its supervisor is the process-tree stop
 * (process/stop.ts); nothing needs collecting: the agent wrote its worktree itself.
 */

/** Where a run's local supervisor lives: here (foreground), detached, or in a tmux pane. */
export function hostFor(run: Pick<RunRequest, 'tmux' | 'mode' | 'cwd'>): RunHost | null {
  if (run.tmux) return tmuxHost({ ...run.tmux, cwd: run.cwd })
  return run.mode === 'background' ? detachedHost : null
}

/** A RUNNING record's state from its processes (supervisor, agent): what local and container runs share. */
export function processState(record: SessionRecord, check: ActEnv['check']): BackendState {
  const liveness = computeLiveness(record, check)
  if (liveness === 'running' || liveness === 'orphaned') return { kind: 'alive', liveness }
  return liveness === 'stale' ? { kind: 'stale' } : { kind: 'unverified' }
}

/** The identity of the latest run's processes, in words. */
export function processIdentity(record: SessionRecord): string | null {
  const { supervisor, agent } = runProcesses(record)
  const parts = [
    ...(agent ? [`agent pid ${agent.pid}`] : []),
    ...(supervisor ? [`supervisor pid ${supervisor.pid}`] : []),
  ]
  return parts.length ? `${parts.join(', ')} on ${supervisor?.hostname ?? agent?.hostname ?? '?'}` : null
}

/** Stops the identity-checked agent tree of the record's latest run, its supervisor gone (or hung). */
async function stopAgentTree(record: SessionRecord, graceMs: number, env: ActEnv): Promise<StopOutcome> {
  const { agent } = runProcesses(record, lastRun(record))
  if (!agent || env.processes.check(agent) !== 'alive') {
    return { kind: 'gone', exit: { exitCode: null, signal: null, stopped: false } }
  }
  const outcome = await env.processes.stopTree(agent, { graceMs })
  const signal = outcome.killed > 0 ? 'SIGKILL' : 'SIGTERM'
  return { kind: 'stopped', exit: { exitCode: null, signal, stopped: true } }
}

export const localBackend: SessionBackend = {
  name: 'local',
  supports: FULL_SUPPORT,
  async check(run) {
    await assertExecutable(run.command, run.env, run.cwd, run.what)
  },
  async prepare() {
    return { record: {}, undo: async () => {} }
  },
  start(run, _prepared, io) {
    return io.supervise({ command: run.command, args: run.args }, hostFor(run))
  },
  identity: processIdentity,
  async liveness(records, env) {
    return records.map((record) => processState(record, env.check))
  },
  logs(record, logsDir) {
    return { files: [logPathFor(logsDir, record.id)], pollMs: 100 }
  },
  stop: stopAgentTree,
  async wait() {
    // The supervisor records the end: the record is watched.
    return false
  },
  async collect() {
    return (record) => record
  },
  uncollected() {
    return null
  },
  async resume() {},
  async destroy() {},
  async doctor() {
    // This machine: git, the agents and tmux are doctor's own lines.
    return []
  },
}
