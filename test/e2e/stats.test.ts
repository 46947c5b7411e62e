import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { sealRecord, sessionRecord } from '../fixtures/records.js'
import { cli, json } from '../helpers/cli.js'
import { tmpPlainDir } from '../helpers/tmp.js'

const run = (n: number, started: string, seconds: number | null, usage?: Record<string, unknown> | null) => ({
  n,
  kind: n === 1 ? 'start' : 'resume',
  started_at: started,
  ended_at: seconds === null ? null : new Date(Date.parse(started) + seconds * 1000).toISOString(),
  exit_code: seconds === null ? null : 0,
  ...(usage !== undefined ? { usage } : {}),
})

test('stats over a generated store: every figure', async () => {
  const { dir, env } = tmpPlainDir()
  const harness = join(dir, '.harness')
  const file = (path: string, bytes: number) => {
    mkdirSync(join(harness, path, '..'), { recursive: true })
    writeFileSync(join(harness, path), 'x'.repeat(bytes))
  }
  const records = [
    sessionRecord('a1', {
      created_at: '2026-01-01T00:00:00.000Z',
      runs: [
        run(1, '2026-01-01T00:00:00.000Z', 60, {
          input_tokens: 100,
          output_tokens: 20,
          cached_tokens: 50,
          cost_usd: 0.5,
        }),
      ],
      checkpoints: [
        {
          n: 0,
          ref: 'refs/harness/a1/checkpoints/0',
          commit: 'a'.repeat(40),
          created_at: '2026-01-01T00:00:10.000Z',
        },
        {
          n: 1,
          ref: 'refs/harness/a1/checkpoints/1',
          commit: 'b'.repeat(40),
          created_at: '2026-01-01T00:00:20.000Z',
        },
      ],
    }),
    sessionRecord('a2', {
      provider: 'codex',
      status: 'FAILED',
      created_at: '2026-02-01T00:00:00.000Z',
      runs: [
        run(1, '2026-02-01T00:00:00.000Z', 10, {
          input_tokens: 1000,
          output_tokens: 200,
          cached_tokens: 0,
          cost_usd: null,
        }),
        // Idle for days between the runs: not agent time.
        run(2, '2026-02-05T00:00:00.000Z', 20, null),
      ],
    }),
    sessionRecord('a3', {
      status: 'KILLED',
      created_at: '2026-03-01T00:00:00.000Z',
      runs: [run(1, '2026-03-01T00:00:00.000Z', 5)],
    }),
    sessionRecord('a4', {
      provider: 'opencode',
      status: 'PAUSED',
      created_at: '2026-03-01T00:00:00.000Z',
      runs: [
        run(1, '2026-03-01T00:00:00.000Z', 1, {
          input_tokens: 7,
          output_tokens: 3,
          cached_tokens: 1,
          cost_usd: 0.25,
        }),
      ],
    }),
    sessionRecord('a5', {
      provider: 'codex',
      status: 'RUNNING',
      created_at: '2026-04-01T00:00:00.000Z',
      runs: [run(1, '2026-04-01T00:00:00.000Z', null)],
    }),
  ]
  mkdirSync(join(harness, 'sessions'), { recursive: true })
  for (const record of records) {
    // a4 is foreign: harness did not seal it.
    const written = record.id === 'a4' ? record : sealRecord(record, env, dir)
    writeFileSync(join(harness, 'sessions', `${record.id}.json`), `${JSON.stringify(written, null, 2)}\n`)
  }
  writeFileSync(join(harness, 'sessions', 'bad.json'), '{ nope')
  file('logs/a1.log', 1000)
  file('logs/a2.log', 234)
  file('logs/auto-cleanup.log', 10)
  file('agents/a1/pi.jsonl', 77)
  file('agents/a2/sub/x', 23)
  file('worktrees/a1/file', 500)
  file('worktrees/a1/dir/f', 300)
  // A symlink counts as itself, never as what it points to.
  symlinkSync('/etc/passwd', join(harness, 'worktrees', 'a1', 'link'))
  const recordBytes = readdirSync(join(harness, 'sessions')).reduce(
    (sum, name) => sum + statSync(join(harness, 'sessions', name)).size,
    0,
  )

  const before = Date.now()
  const result = await cli(['session', 'stats', '--json'], { cwd: dir, env })
  const after = Date.now()
  expect(result.exitCode, result.stderr).toBe(0)
  expect(result.stderr).toContain('bad.json')
  const stats = json<
    Record<string, unknown> & { agent_time_ms: number; by_agent: Record<string, { agent_time_ms: number }> }
  >(result)
  const running = (ms: number) => ms - Date.parse('2026-04-01T00:00:00.000Z')
  const known = 60_000 + 10_000 + 20_000 + 5_000 + 1_000
  expect(stats.agent_time_ms).toBeGreaterThanOrEqual(known + running(before))
  expect(stats.agent_time_ms).toBeLessThanOrEqual(known + running(after))
  const codexTime = stats.by_agent.codex?.agent_time_ms ?? 0
  expect(codexTime - 30_000).toBe(stats.agent_time_ms - known)
  expect({
    ...stats,
    agent_time_ms: 0,
    by_agent: { ...stats.by_agent, codex: { ...stats.by_agent.codex, agent_time_ms: 0 } },
  }).toEqual({
    sessions: 5,
    by_status: { RUNNING: 1, PAUSED: 1, COMPLETED: 1, FAILED: 1, KILLED: 1 },
    by_agent: {
      claude: { sessions: 2, agent_time_ms: 65_000, total_tokens: 120, cost_usd: 0.5 },
      codex: { sessions: 2, agent_time_ms: 0, total_tokens: 1200, cost_usd: null },
      opencode: { sessions: 1, agent_time_ms: 1_000, total_tokens: 10, cost_usd: 0.25 },
    },
    corrupt: 1,
    foreign: 1,
    checkpoints: 2,
    oldest: { id: 'a1', created_at: '2026-01-01T00:00:00.000Z' },
    newest: { id: 'a5', created_at: '2026-04-01T00:00:00.000Z' },
    agent_time_ms: 0,
    tokens: {
      total_tokens: 1330,
      input_tokens: 1107,
      output_tokens: 223,
      cached_tokens: 51,
      sessions_with_usage: 3,
    },
    cost_usd: 0.75,
    disk: {
      records: recordBytes,
      logs: 1244,
      agent_files: 100,
      worktrees: 800 + '/etc/passwd'.length,
      total: recordBytes + 1244 + 100 + 811,
    },
  })

  const text = await cli(['session', 'stats'], { cwd: dir, env })
  expect(text.exitCode).toBe(0)
  expect(text.stdout).toMatch(/^Sessions:\s+5 \(1 running, 1 paused, 1 completed, 1 failed, 1 killed\)$/m)
  expect(text.stdout).toMatch(/^Tokens:\s+1,330 /m)
  expect(text.stdout).toMatch(/^Cost:\s+\$0\.7500 /m)
})
