import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { agentEnv, fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo } from '../helpers/tmp.js'

type Rec = Record<string, unknown> & { id: string; status: string; runs: Rec[] }

const fixture = (name: string) =>
  readFileSync(new URL(`../fixtures/agent-output/${name}`, import.meta.url), 'utf8').trimEnd()

describe('history of a session', () => {
  test('usage is recorded per run and summed; logs are readable with run headers; --raw is the file', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const first = await cli(['run', '-a', 'codex', '--json', 'fix auth'], {
      cwd: repo.dir,
      env: { ...agents.env, ...agentEnv({ output: fixture('codex.jsonl') }) },
    })
    expect(first.exitCode, first.stderr).toBe(0)
    const { id } = json<Rec>(first)
    const second = await cli(['session', 'resume', id, '--json', 'and the docs'], {
      cwd: repo.dir,
      env: { ...agents.env, ...agentEnv({ output: 'not an event stream\n{"type":"mystery"}' }) },
    })
    expect(second.exitCode, second.stderr).toBe(0)
    const record = json<Rec>(second)
    expect(record.runs[0]?.usage).toEqual({
      input_tokens: 24763,
      output_tokens: 122,
      cached_tokens: 24448,
      cost_usd: null,
    })
    // A run whose output is no known format records no usage and still completes.
    expect(record.status).toBe('COMPLETED')
    expect(record.runs[1]?.usage).toBeNull()
    expect(record.cost).toEqual({ total_tokens: 24763 + 122, estimated_cost_usd: null })

    const logPath = join(repo.dir, '.harness', 'logs', `${id}.log`)
    const raw = await cli(['session', 'logs', id, '--raw'], { cwd: repo.dir, env: agents.env })
    expect(raw.stdout).toBe(readFileSync(logPath, 'utf8'))
    const logs = await cli(['session', 'logs', id], { cwd: repo.dir, env: agents.env })
    expect(logs.exitCode, logs.stderr).toBe(0)
    const lines = logs.stdout.split('\n')
    expect(lines[0]).toBe(`── run 1 · start · ${record.runs[0]?.started_at} ──`)
    expect(lines).toContain("→ shell(bash -lc 'npm test')")
    expect(lines).toContain('Fixed the expiry check in src/auth.ts.')
    expect(lines).toContain('· usage: 24,763 in (24,448 cached), 122 out')
    expect(lines).toContain(`── run 2 · resume · ${record.runs[1]?.started_at} ──`)
    expect(lines).toContain('{"type":"mystery"}')
    expect(lines.indexOf('not an event stream')).toBeGreaterThan(
      lines.indexOf('Fixed the expiry check in src/auth.ts.'),
    )

    const show = await cli(['session', 'show', id], { cwd: repo.dir, env: agents.env })
    expect(show.stdout).toMatch(/Tokens:\s+24,885/)
    expect(show.stdout).toContain('usage: 24,763 in (24,448 cached), 122 out')
  })
})
