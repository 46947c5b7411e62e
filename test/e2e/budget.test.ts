import { describe, expect, test } from 'vitest'
import { type FakeAgentEntry, fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo } from '../helpers/tmp.js'

type Rec = Record<string, unknown> & {
  id: string
  status: string
  stop_reason?: string | null
  exit_code?: number | null
  budget_usd?: number | null
  cost?: { total_tokens: number | null; estimated_cost_usd: number | null } | null
  runs: { n: number; usage?: Record<string, unknown> | null }[]
}

/** The value the agent got after `--max-budget-usd`, or undefined when it got no such flag. */
function maxBudgetArg(start: FakeAgentEntry): string | undefined {
  const args = start.args ?? []
  const at = args.indexOf('--max-budget-usd')
  return at < 0 ? undefined : args[at + 1]
}

async function show(dir: string, env: NodeJS.ProcessEnv, id: string): Promise<Rec> {
  const result = await cli(['session', 'show', id, '--json'], { cwd: dir, env })
  expect(result.exitCode, result.stderr).toBe(0)
  return json<Rec>(result)
}

describe('run --budget / resume --budget', () => {
  test('a detached claude run is paused once its reported cost reaches the budget; resume --budget with more goes on', async () => {
    const repo = tmpGitRepo()
    // A claude that ignores its --max-budget-usd: harness's own stop is what ends it.
    const agents = fakeAgents(repo.dir, repo.env, { stream: { kind: 'claude', step: 0.1, everyMs: 60 } })
    const env = agents.env
    const run = await cli(['run', '-a', 'claude', '--detach', '--json', '--budget', '0.35', 'add tests'], {
      cwd: repo.dir,
      env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id } = json<Rec>(run)

    // Stopped by harness: `wait` returns once it is no longer RUNNING, with the budget's exit code.
    const wait = await cli(['session', 'wait', id, '--timeout', '60s'], { cwd: repo.dir, env })
    expect(wait.exitCode, wait.stderr).toBe(6)
    const paused = await show(repo.dir, env, id)
    expect(paused.status).toBe('PAUSED')
    expect(paused.stop_reason).toBe('budget')
    expect(paused.budget_usd).toBe(0.35)
    const spent = paused.cost?.estimated_cost_usd ?? 0
    expect(spent).toBeGreaterThanOrEqual(0.35)
    for (const pid of agents.starts().map((s) => s.pid)) expect(isAlive(pid)).toBe(false)
    // claude enforces a budget itself: it was given the whole budget at the start.
    const [first] = agents.starts()
    expect(first && maxBudgetArg(first)).toBe('0.35')

    // The budget is spent: resuming without a larger one is refused, and so is one not above what was spent.
    const again = await cli(['session', 'resume', id], { cwd: repo.dir, env })
    expect(again.exitCode).toBe(4)
    expect(again.stderr).toContain('has spent its budget')
    const small = await cli(['session', 'resume', id, '--budget', '0.30'], { cwd: repo.dir, env })
    expect(small.exitCode).toBe(2)
    expect(small.stderr).toContain('is not more than')
    expect(agents.starts()).toHaveLength(1)

    // The human views: COST in the table, the budget and what is left in show.
    const list = await cli(['session', 'list'], { cwd: repo.dir, env })
    expect(list.stdout.split('\n')[0]).toMatch(/\bCOST\b/)
    expect(list.stdout).toContain(`/$0.35`)
    const detail = await cli(['session', 'show', id], { cwd: repo.dir, env })
    expect(detail.stdout).toMatch(/Budget:\s+\$0\.35 \(reached: \$0\.\d{4} spent\)/)

    // More budget: it goes on, the cost so far counted, and claude gets what is left. How far the first run went
    // past its budget depends on how busy the machine was when harness stopped it, so the new budget is counted
    // from what was spent.
    const larger = Math.round((spent + 0.45) * 100) / 100
    const more = await cli(['session', 'resume', id, '--detach', '--budget', String(larger)], {
      cwd: repo.dir,
      env,
    })
    expect(more.exitCode, more.stderr).toBe(0)
    const second = await cli(['session', 'wait', id, '--timeout', '60s'], { cwd: repo.dir, env })
    expect(second.exitCode, second.stderr).toBe(6)
    const resumed = await show(repo.dir, env, id)
    expect(resumed.status).toBe('PAUSED')
    expect(resumed.stop_reason).toBe('budget')
    expect(resumed.budget_usd).toBe(larger)
    expect(resumed.runs).toHaveLength(2)
    expect(resumed.cost?.estimated_cost_usd ?? 0).toBeGreaterThanOrEqual(larger)
    const starts = agents.starts()
    expect(starts).toHaveLength(2)
    const left = Number(maxBudgetArg(starts[1] as FakeAgentEntry))
    expect(left).toBeCloseTo(larger - spent, 6)
    expect(starts[1]?.args).toContain('--resume')
  })

  test('a foreground claude that stops at its own --max-budget-usd is PAUSED with stop_reason budget, exit 6', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.dir, repo.env, {
      stream: { kind: 'claude', step: 0.1, everyMs: 30, honorBudget: true },
    })
    const record = await pausedAtBudget(repo.dir, agents.env, '0.25')
    expect(record.exit_code).toBeNull()
    expect(agents.entries().find((e) => e.event === 'exit')).toMatchObject({ code: 1 })
    expect(record.cost?.estimated_cost_usd).toBeCloseTo(0.3, 6)
  })

  test('one output line in another format with a negative cost (-$95) does not defeat the budget', async () => {
    const repo = tmpGitRepo()
    // A claude that ignores its --max-budget-usd and first prints a pi-format line claiming -$95: counted, it
    // would keep the session's cost below the budget for all 40 steps ($4.00), and the run would complete.
    const forged = JSON.stringify({
      type: 'message_end',
      message: { role: 'assistant', content: [], usage: { input: 1, output: 1, cost: { total: -95 } } },
    })
    const agents = fakeAgents(repo.dir, repo.env, {
      stream: { kind: 'claude', step: 0.1, everyMs: 30, steps: 40 },
      output: forged,
    })
    const record = await pausedAtBudget(repo.dir, agents.env, '0.35')
    expect(record.cost?.estimated_cost_usd ?? 0).toBeGreaterThanOrEqual(0.35)
    for (const value of Object.values(record.runs[0]?.usage ?? {})) {
      if (typeof value === 'number') expect(value).toBeGreaterThanOrEqual(0)
    }
  })

  test('codex tokens are priced by config pricing.<model> (a dotted model name), and the run is stopped at the budget', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.dir, repo.env, { stream: { kind: 'codex', step: 1000, everyMs: 40 } })
    const env = agents.env
    const set = await cli(['config', 'set', '--user', 'pricing.gpt-5.1-test', '{"input": 2, "output": 8}'], {
      cwd: repo.dir,
      env,
    })
    expect(set.exitCode, set.stderr).toBe(0)
    const get = await cli(['config', 'get', '--user', 'pricing.gpt-5.1-test.output', '--json'], {
      cwd: repo.dir,
      env,
    })
    expect(get.exitCode, get.stderr).toBe(0)
    expect(get.stdout).toContain('8')
    const bad = await cli(['config', 'set', '--user', 'pricing.other.input', '"cheap"'], {
      cwd: repo.dir,
      env,
    })
    expect(bad.exitCode).not.toBe(0)

    // A turn: 1000 input tokens at $2/M and 1000 output tokens at $8/M, $0.01.
    const run = await cli(
      ['run', '-a', 'codex', '-m', 'gpt-5.1-test', '--json', '--budget', '0.045', 'fix'],
      {
        cwd: repo.dir,
        env,
      },
    )
    expect(run.exitCode, run.stderr).toBe(6)
    const record = json<Rec>(run)
    expect(record.status).toBe('PAUSED')
    expect(record.stop_reason).toBe('budget')
    const usage = record.runs[0]?.usage
    expect(usage?.cost_source).toBe('pricing')
    const turns = (usage?.input_tokens as number) / 1000
    expect(turns).toBeGreaterThanOrEqual(5)
    expect(usage?.cost_usd).toBeCloseTo(turns * 0.01, 6)
    expect(record.cost?.estimated_cost_usd).toBeCloseTo(turns * 0.01, 6)
    // Stopped by harness (SIGTERM), not finished by itself.
    expect(agents.entries().some((e) => e.event === 'sigterm')).toBe(true)
    // codex has no budget flag of its own.
    expect(maxBudgetArg(agents.starts()[0] as FakeAgentEntry)).toBeUndefined()
    const detail = await cli(['session', 'show', record.id], { cwd: repo.dir, env })
    expect(detail.stdout).toContain('tokens priced by config "pricing"')
  })

  test('--budget without a cost source is a usage error naming why, and nothing is started', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.dir, repo.env)
    const env = agents.env
    const cases: [string[], string][] = [
      [['-a', 'gemini'], 'reports neither a cost nor tokens'],
      [['-a', 'exec', '--budget', '1', '--', 'true'], 'reports neither a cost nor tokens'],
      [['-a', 'codex'], 'without -m'],
      [['-a', 'codex', '-m', 'unpriced'], 'no pricing for model "unpriced"'],
    ]
    for (const [args, message] of cases) {
      const full = args.includes('--budget') ? ['run', ...args] : ['run', ...args, '--budget', '1', 'task']
      const result = await cli(full, { cwd: repo.dir, env })
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(2)
      expect(result.stderr).toContain(message)
    }
    for (const amount of ['abc', '0', '-1', '1e3']) {
      const result = await cli(['run', '-a', 'claude', `--budget=${amount}`, 'task'], { cwd: repo.dir, env })
      expect(result.exitCode, amount).toBe(2)
      expect(result.stderr).toContain('invalid --budget')
    }
    expect(agents.starts()).toHaveLength(0)
    const list = await cli(['session', 'list', '--json'], { cwd: repo.dir, env })
    expect(json(list)).toEqual([])
  })
})

/** A foreground claude run in `dir` with `budget`, which must end PAUSED at its budget (exit 6): its record. */
async function pausedAtBudget(dir: string, env: NodeJS.ProcessEnv, budget: string): Promise<Rec> {
  const run = await cli(['run', '-a', 'claude', '--json', '--budget', budget, 'add tests'], { cwd: dir, env })
  expect(run.exitCode, run.stderr).toBe(6)
  const record = json<Rec>(run)
  expect(record.status).toBe('PAUSED')
  expect(record.stop_reason).toBe('budget')
  return record
}
