import type { DashboardSession } from '../../../src/ui/port.js'

export const NOW = new Date('2026-12-03T12:00:00Z')

/** A row as the port gives it: a finished exec session made a minute before NOW, unless told otherwise. */
export function row(overrides: Partial<DashboardSession> = {}): DashboardSession {
  return {
    id: '3f9a12c8',
    name: null,
    project: null,
    projectDir: null,
    agent: 'claude',
    status: 'COMPLETED',
    statusCode: 'COMPLETED',
    state: '',
    tmux: false,
    createdAt: '2026-12-03T11:59:00Z',
    cost: '-',
    task: 'add auth endpoints',
    branch: 'harness/3f9a12c8',
    ...overrides,
  }
}
