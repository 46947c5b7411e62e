import type { SessionBackend } from './backend.js'

/**
 * This machine: today's code, unchanged. The agent is a process the supervisor spawns itself (in the
 * foreground, detached, or in a tmux pane: src/process/host.ts); identity is pid + start time
 * (src/process/identity.ts), liveness is computed from the record (src/sessions/record/liveness.ts), stop is the
 * process-tree stop (src/process/stop.ts), and nothing needs collecting: the agent wrote its worktree directly.
 * The adapter adds nothing to those: where a local run needs no backend step, it says so.
 */
export const localBackend: SessionBackend = {
  name: 'local',
  async place(run) {
    return { command: run.command, args: run.args, record: {}, settle: null, undo: async () => {} }
  },
  async view() {
    return { kind: 'processes' }
  },
  async stop() {
    // The process-tree stop of src/sessions/control/control.ts (`stopDirectly`) handles local agents.
    return 'gone'
  },
  async settle() {},
  async wait() {
    return undefined
  },
  async destroy() {},
}
