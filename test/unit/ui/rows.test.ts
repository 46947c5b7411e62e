import { expect, test } from 'vitest'
import type { SessionView } from '../../../src/sessions/query/reconcile.js'
import { dashboardSession } from '../../../src/ui/rows.js'

const view = (overrides: Partial<SessionView>): SessionView =>
  ({
    id: '3f9a12c8',
    provider: 'claude',
    status: 'RUNNING',
    worktree_dir: '/tmp/x',
    created_at: '2026-12-03T11:59:00Z',
    prompt: 'add auth',
    git_branch: 'harness/3f9a12c8',
    ...overrides,
  }) as SessionView

test('a row says what session list says: status with liveness, the tmux state, cost, task', () => {
  const running = dashboardSession(
    view({ liveness: 'orphaned', tmux_session: 'harness-3f9a12c8', state: 'waiting', name: 'auth' }),
  )
  expect(running).toMatchObject({
    id: '3f9a12c8',
    name: 'auth',
    status: 'RUNNING (orphaned)',
    statusCode: 'RUNNING',
    state: 'waiting',
    tmux: true,
    cost: '-',
    task: 'add auth',
  })
  // A finished session has no state, whatever its record kept.
  expect(dashboardSession(view({ status: 'COMPLETED', state: 'busy' })).state).toBe('')
  expect(dashboardSession(view({}), { label: '~/work/api', dir: '/home/u/work/api' })).toMatchObject({
    project: '~/work/api',
    projectDir: '/home/u/work/api',
  })
})

test('every string from the record is made safe for the terminal', () => {
  const hostile = dashboardSession(
    view({
      provider: 'claude\x1b]0;owned\x07',
      prompt: 'task\x1b[2J\u202eevil\nsecond line',
      git_branch: 'b\x9b31m',
      sealed: false,
    }),
  )
  const all = Object.values(hostile).join(' ')
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  expect(all).not.toMatch(/[\u001b\u0007\u009b\u202e]/)
  expect(hostile.agent).toBe('claude\\x1b]0;owned\\x07')
  expect(hostile.task).toBe('task\\x1b[2J\\u202eevil second line')
  expect(hostile.status).toBe('RUNNING (foreign)')
})
