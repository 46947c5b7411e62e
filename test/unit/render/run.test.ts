import { describe, expect, test } from 'vitest'
import { resumeSummary, runSummary } from '../../../src/render/run.js'
import { sessionRecord } from '../../fixtures/records.js'

describe('the summary a foreground resume ends with', () => {
  test('the time the agent ran (pauses between runs left out), the cost so far and the files changed', () => {
    const run = (n: number, start: string, end: string) => ({
      n,
      kind: n === 1 ? ('start' as const) : ('resume' as const),
      started_at: `2026-09-24T${start}:00.000Z`,
      ended_at: `2026-09-24T${end}:00.000Z`,
    })
    // 10 minutes, then paused for an hour, then 5 minutes more.
    const session = sessionRecord('3f9a12c8', {
      runs: [run(1, '18:00', '18:10'), run(2, '19:10', '19:15')],
      cost: { total_tokens: 1200, estimated_cost_usd: 0.42 },
      files_modified: ['a.ts', 'b.ts', 'c.ts'],
    })
    expect(resumeSummary(session, new Date('2026-09-24T20:00:00.000Z'))).toBe(
      '3f9a12c8: 15m 00s, $0.42, 3 files',
    )
    expect(
      resumeSummary(
        { ...session, cost: null, files_modified: ['a.ts'] },
        new Date('2026-09-24T20:00:00.000Z'),
      ),
    ).toBe('3f9a12c8: 15m 00s, no cost reported, 1 file')
  })
})

describe('the line a run in the background starts with', () => {
  test('names the agent pid here, or the Slurm job of a session on a cluster (it has no pid here)', () => {
    const running = sessionRecord('3f9a12c8', { status: 'RUNNING', pid: 4242, is_worktree: false })
    expect(runSummary(running)).toBe(
      'harness: session 3f9a12c8 started (agent pid 4242); follow it: harness session logs -f 3f9a12c8',
    )
    const job = {
      cluster: 'c',
      job_id: '200001',
      submit_time: '2026-12-03T14:00:00',
      run: 1,
      spool: '/spool/harness-0',
      start_tip: 'a',
      start_tree: 'b',
    }
    expect(runSummary({ ...running, pid: null, slurm: job })).toBe(
      'harness: session 3f9a12c8 started (Slurm job 200001); follow it: harness session logs -f 3f9a12c8',
    )
  })
})
