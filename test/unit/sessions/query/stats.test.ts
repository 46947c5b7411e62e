import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { sessionStats } from '../../../../src/sessions/query/stats.js'
import { FakeClock, fakeEnv, finishedRecord, runningRecord } from '../../../helpers/fake-env.js'
import { tmpDir } from '../../../helpers/tmp.js'

describe('stats through the port', () => {
  test('counts by status and agent, usage and cost, a running run until the clock, corrupt and foreign', async () => {
    const clock = new FakeClock(Date.parse('2026-10-01T12:00:00.000Z'))
    const { env, store, warnings } = fakeEnv({
      clock,
      records: [
        finishedRecord('done0001', {
          runs: [
            {
              n: 1,
              kind: 'start',
              started_at: '2026-10-01T10:00:00.000Z',
              ended_at: '2026-10-01T10:10:00.000Z',
              usage: { input_tokens: 100, output_tokens: 20, cost_usd: 0.5 },
            },
          ] as never,
        }),
        finishedRecord('fail0001', { status: 'FAILED', provider: 'codex', sealed: false }),
        // Started 11:00, the clock says 12:00: one hour so far.
        runningRecord('runs0001', {}),
      ],
    })
    store.putCorrupt('bad00001')
    const stats = await sessionStats(env)
    expect(stats).toMatchObject({
      sessions: 3,
      by_status: { COMPLETED: 1, FAILED: 1, RUNNING: 1 },
      corrupt: 1,
      foreign: 1,
      cost_usd: 0.5,
      tokens: { total_tokens: 120, sessions_with_usage: 1 },
      oldest: { id: 'done0001' },
    })
    expect(stats.by_agent.codex).toMatchObject({ sessions: 1, agent_time_ms: 30 * 60_000 })
    // done: 10 min, fail: 30 min, running: 60 min by the fake clock.
    expect(stats.agent_time_ms).toBe((10 + 30 + 60) * 60_000)
    expect(store.problems).toEqual([expect.objectContaining({ path: expect.stringContaining('bad00001') })])
    expect(warnings).toEqual([])
  })

  test("the worktrees folder is the one the port's config names", async () => {
    const root = tmpDir()
    const worktrees = join(root, 'elsewhere')
    mkdirSync(join(worktrees, 'a'), { recursive: true })
    writeFileSync(join(worktrees, 'a', 'file'), 'x'.repeat(1000))
    const { env } = fakeEnv({ root, config: { worktree: { root: worktrees } } as never })
    expect((await sessionStats(env)).disk.worktrees).toBe(1000)
  })
})
