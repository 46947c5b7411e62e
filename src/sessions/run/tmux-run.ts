import { closeSync } from 'node:fs'
import { fdSize } from '../../disk/door.js'
import { identify } from '../../process/identity.js'
import { capturePane, pipePaneToLog } from '../../process/tmux.js'
import { logPathFor } from '../../project.js'
import type { AgentState } from '../../providers/states.js'
import { detectAgentState, statePatternsFor } from '../../providers/states.js'
import { releaseMemory } from '../../runtime.js'
import { receivePlan } from '../backends/local/host.js'
import type { RecordStore as SessionStore } from '../ports.js'
import { lastRun } from '../record/liveness.js'
import type { SessionRecord } from '../record/schema.js'
import { parseRunPlan } from './run-plan.js'
import { openLog, type RunPlan, supervise, supervisorStore } from './runner.js'

/** Does nothing: a SIGHUP listener that outlives the run's own (see `superviseInTmux`). */
function outlastHangUp(): void {}

/** How often the supervisor reads the agent's screen. */
const STATE_POLL_MS = 400

/**
 * The hidden `__supervise --tmux-plan <file>` command: the supervisor of a run hosted in tmux, running as the
 * process of the session's pane (docs/tmux.md). The agent inherits the pane's terminal, as in a foreground
 * interactive run; the pane's output is copied to the session's log (`pipe-pane`); and the supervisor reads
 * the screen every few hundred milliseconds to record the agent's state.
 */
export async function superviseInTmux(
  planFile: string,
  /** Where tmux put this process: its TMUX and TMUX_PANE (the rest of tmux's environment is not used). */
  pane: { TMUX?: string; TMUX_PANE?: string },
): Promise<void> {
  const received = await receivePlan(planFile)
  const plan = received === null ? null : parseRunPlan(received)
  if (!plan?.tmux) return // the launcher gave up before committing the run
  // tmux gave this process its server's environment; the run uses the launcher's (config, state dirs), which
  // every call below is given explicitly.
  const hostEnv = plan.supervisorEnv ?? plan.env
  const store = await supervisorStore(plan)
  const record = store.get(plan.id)
  const run = record ? lastRun(record) : undefined
  // Only the supervisor the record names may run it.
  if (record?.status !== 'RUNNING' || run?.n !== plan.runN || run.supervisor_pid !== process.pid) return
  const self = identify(process.pid)
  if (!self) return
  const { socket } = plan.tmux
  const target = pane.TMUX_PANE ?? plan.tmux.session
  const env = {
    ...plan.env,
    ...(pane.TMUX ? { TMUX: pane.TMUX } : {}),
    ...(pane.TMUX_PANE ? { TMUX_PANE: pane.TMUX_PANE } : {}),
  }
  let logFd: number | undefined
  let piped = false
  // The pane's output as far as it reached the log, while pipe-pane copies it there (null: not known).
  const outputSize = () => (piped && logFd !== undefined ? fdSize(logFd) : null)
  const watcher = stateWatcher(plan, store, { socket, target, hostEnv, outputSize })
  try {
    await supervise(
      { ...plan, env, mode: 'interactive' },
      store,
      async () => {
        logFd = openLog(plan)
        try {
          await pipePaneToLog(socket, target, logPathFor(plan.logsDir, plan.id), hostEnv)
          piped = true
        } catch {
          // Without a log the agent still runs; `logs` then shows only harness's own notes.
        }
        return logFd
      },
      {
        started: () => {
          watcher.start()
          releaseMemory()
        },
        ended: async () => {
          // Once the outcome is recorded, `kill` ends the tmux session at once, and its hang-up would kill this
          // process before the status hooks it still has queued have run (each change runs its hook exactly
          // once). The agent is gone: from here a hang-up is ignored, also once the run's own handlers are
          // removed, and the process ends by itself when its hooks are done.
          process.on('SIGHUP', outlastHangUp)
          await watcher.stop()
        },
      },
    )
  } finally {
    if (logFd !== undefined) closeSync(logFd)
  }
}

/**
 * Reads the pane every STATE_POLL_MS and records the state it shows. A new state is recorded once two reads
 * in a row agree, so that a screen caught halfway through a redraw does not flicker into the record.
 */
function stateWatcher(
  plan: RunPlan,
  store: SessionStore,
  pane: { socket: string; target: string; hostEnv: NodeJS.ProcessEnv; outputSize: () => number | null },
) {
  const { socket, target, hostEnv } = pane
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let recorded: AgentState | null = null
  let candidate: AgentState | null = null
  let busy: Promise<void> = Promise.resolve()
  // The screen changes only by the pane's output, which tmux draws before pipe-pane copies it to the log:
  // while the log has not grown since a reading that agreed with the one before, the screen says nothing new,
  // and an idle agent costs its supervisor a stat instead of a tmux process (docs/tmux.md).
  let readAt: number | null = null
  let steady = false

  const tick = async () => {
    const size = pane.outputSize()
    if (steady && size !== null && size === readAt) return
    const screen = await capturePane(socket, target, hostEnv)
    if (screen === null || stopped) return
    readAt = size
    // A blank pane: the agent has drawn nothing yet, which says nothing about its state (nor will it, until
    // the agent prints).
    if (screen.trim() === '') {
      steady = true
      return
    }
    const state = detectAgentState(screen, statePatternsFor(plan.provider ?? ''))
    const confirmed = state === candidate
    candidate = state
    steady = confirmed
    if (!confirmed || state === recorded) return
    recorded = state
    await store.update(plan.id, (current: SessionRecord) => {
      const run = lastRun(current)
      if (current.status !== 'RUNNING' || run?.n !== plan.runN || current.state === state) return undefined
      return { ...current, state }
    })
  }
  const schedule = () => {
    if (stopped) return
    timer = setTimeout(() => {
      busy = tick()
        .catch(() => {})
        .finally(schedule)
    }, STATE_POLL_MS)
  }
  return {
    start: () => {
      busy = tick()
        .catch(() => {})
        .finally(schedule)
    },
    stop: async () => {
      stopped = true
      if (timer) clearTimeout(timer)
      await busy
    },
  }
}
