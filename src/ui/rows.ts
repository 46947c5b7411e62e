import { terminalSafeLine } from '../render/safe.js'
import { agentState, costLabel, statusLabel, taskLabel } from '../render/session.js'
import type { SessionView } from '../sessions/query/reconcile.js'
import type { DashboardSession } from './port.js'

/**
 * A session as the dashboard's row: the labels `session list` prints (status with its liveness, state, cost,
 * task), every string from the record made safe for the terminal here, where it leaves the record.
 */
export function dashboardSession(
  view: SessionView,
  project: { label: string; dir: string } | null = null,
): DashboardSession {
  const name = view.name
  return {
    id: terminalSafeLine(view.id),
    name: typeof name === 'string' && name ? terminalSafeLine(name) : null,
    project: project ? terminalSafeLine(project.label) : null,
    projectDir: project?.dir ?? null,
    agent: terminalSafeLine(view.provider),
    status: terminalSafeLine(statusLabel(view)),
    statusCode: view.status,
    state: terminalSafeLine(agentState(view)),
    tmux: typeof view.tmux_session === 'string',
    createdAt: view.created_at,
    cost: terminalSafeLine(costLabel(view)),
    task: terminalSafeLine(taskLabel(view)),
    branch: terminalSafeLine(view.git_branch ?? '-'),
  }
}
