import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { configGet, configSet, configUnset } from '../../src/config-edit.js'
import { EventReader } from '../../src/history/events.js'
import { buildAgentInvocation, resolveProvider } from '../../src/providers/args.js'
import { costLabel, renderSessionDetail, renderSessionList } from '../../src/render/session.js'
import {
  assertBudgetable,
  parseBudget,
  priceTokens,
  resumeBudget,
  spentUsd,
  withPricedCost,
} from '../../src/sessions/budget.js'
import { applyRunExit } from '../../src/sessions/record/outcome.js'
import type { SessionRecord } from '../../src/sessions/record/schema.js'
import { sessionRecord } from '../fixtures/records.js'
import { tmpDir } from '../helpers/tmp.js'

describe('budget decisions', () => {
  test('--budget amounts: USD above 0, with or without "$"', () => {
    expect(parseBudget('1.00')).toBe(1)
    expect(parseBudget('$2.5')).toBe(2.5)
    expect(parseBudget('.75')).toBe(0.75)
    for (const bad of ['0', '-1', 'abc', '1e3', '', '1,5']) {
      expect(() => parseBudget(bad), bad).toThrow(expect.objectContaining({ exitCode: 2 }))
    }
  })

  test('tokens are priced per million, cached input at its own price when given; a reported cost is kept', () => {
    const usage = { input_tokens: 1_000_000, output_tokens: 500_000, cached_tokens: 400_000, cost_usd: null }
    expect(priceTokens(usage, { input: 2, output: 8 })).toBe(2 + 4)
    expect(priceTokens(usage, { input: 2, output: 8, cached_input: 0.5 })).toBe(1.2 + 0.2 + 4)
    expect(withPricedCost(usage, { input: 2, output: 8 })).toMatchObject({
      cost_usd: 6,
      cost_source: 'pricing',
    })
    const reported = { ...usage, cost_usd: 0.5 }
    expect(withPricedCost(reported, { input: 2, output: 8 })).toBe(reported)
    const runs = [
      { n: 1, kind: 'start' as const, started_at: '2026-01-01T00:00:00.000Z', usage: { cost_usd: 0.25 } },
      { n: 2, kind: 'resume' as const, started_at: '2026-01-01T01:00:00.000Z', usage: null },
    ]
    expect(spentUsd(runs, null)).toBe(0.25)
  })

  test('which runs can have a budget: headless, with a reported cost or priced tokens', () => {
    const config = { pricing: { 'gpt-5.1': { input: 1.25, output: 10 } } }
    const check = (agent: string, model: string | undefined, mode: 'headless' | 'interactive') =>
      assertBudgetable({ budgetUsd: 1, provider: resolveProvider(agent), model, mode, config })
    expect(check('claude', undefined, 'headless')).toBeNull()
    expect(check('codex', 'gpt-5.1', 'headless')).toEqual({ input: 1.25, output: 10 })
    expect(() => check('claude', undefined, 'interactive')).toThrow(/needs a headless run/)
    expect(() => check('gemini', undefined, 'headless')).toThrow(/reports neither a cost nor tokens/)
    expect(() => check('codex', undefined, 'headless')).toThrow(/without -m/)
    expect(() => check('codex', 'o3', 'headless')).toThrow(/no pricing for model "o3"/)
  })

  test('a resume: a larger --budget replaces the old one; a spent budget refuses a resume without one', () => {
    expect(resumeBudget('s1', 1, 2, 1.02)).toEqual({ limit_usd: 2, spent_usd: 1.02 })
    expect(resumeBudget('s1', 1, undefined, 0.4)).toEqual({ limit_usd: 1, spent_usd: 0.4 })
    expect(resumeBudget('s1', null, undefined, 5)).toBeNull()
    expect(() => resumeBudget('s1', 1, 1, 1.02)).toThrow(expect.objectContaining({ exitCode: 2 }))
    expect(() => resumeBudget('s1', 1, undefined, 1.02)).toThrow(expect.objectContaining({ exitCode: 4 }))
  })

  test('the hints of a spent budget are safe to paste: a shell reads the amount as written', {
    tags: ['process'],
  }, () => {
    const hints: string[] = []
    for (const given of [1, undefined]) {
      try {
        resumeBudget('s1', 1, given, 1.2)
      } catch (error) {
        hints.push((error as { hint: string }).hint)
      }
    }
    expect(hints).toEqual([
      'give a larger amount, e.g. --budget 1.21',
      'resume it with a larger one: harness session resume s1 --budget 1.21',
    ])
    // What bash makes of the pasted line: the words harness would get.
    const line = (hints[1] as string).slice((hints[1] as string).indexOf('harness'))
    const words = execFileSync('bash', ['-c', `printf '%s\\n' ${line}`], { encoding: 'utf8' })
    expect(words.trim().split('\n')).toEqual(['harness', 'session', 'resume', 's1', '--budget', '1.21'])
  })
})

describe('the outcome of a run that met its budget', () => {
  const running = (extra: Partial<SessionRecord> = {}): SessionRecord =>
    sessionRecord('b1', {
      status: 'RUNNING',
      completed_at: null,
      exit_code: null,
      runs: [{ n: 1, kind: 'start', started_at: '2026-09-24T18:00:00.000Z', ended_at: null }],
      ...extra,
    })
  const at = '2026-09-24T18:10:00.000Z'

  test("harness's own budget stop is PAUSED with stop_reason budget; a user's pause stays paused", () => {
    const budgetStop = { action: 'pause' as const, at, reason: 'budget' }
    const ended = applyRunExit(running({ stop_request: budgetStop }), 1, {
      exitCode: 143,
      signal: null,
      interruptedBy: 'SIGTERM',
      stopped: true,
    })
    expect(ended).toMatchObject({ status: 'PAUSED', stop_reason: 'budget', exit_code: null })
    const paused = applyRunExit(running({ stop_request: { action: 'pause', at } }), 1, {
      exitCode: 143,
      signal: null,
      interruptedBy: 'SIGTERM',
      stopped: true,
    })
    expect(paused).toMatchObject({ status: 'PAUSED', stop_reason: 'paused' })
  })

  test('an agent that stops at its own limit is PAUSED; one that finished its task is COMPLETED', () => {
    expect(applyRunExit(running(), 1, { exitCode: 1, signal: null, budgetReached: true })).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'budget',
    })
    expect(applyRunExit(running(), 1, { exitCode: 0, signal: null, budgetReached: true })).toMatchObject({
      status: 'COMPLETED',
      stop_reason: 'exited',
    })
  })
})

test("claude's result events are running totals of its process: a run's cost is the last, not the sum", () => {
  const reader = new EventReader()
  for (const cost of [0.1, 0.2, 0.3]) {
    reader.push(
      JSON.stringify({
        type: 'result',
        subtype: 'success',
        total_cost_usd: cost,
        usage: { output_tokens: Math.round(cost * 100) },
      }),
    )
  }
  expect(reader.budgetExceeded).toBe(false)
  reader.push(
    JSON.stringify({ type: 'result', subtype: 'error_max_budget_usd', is_error: true, total_cost_usd: 0.4 }),
  )
  expect(reader.usage).toMatchObject({ cost_usd: 0.4, output_tokens: 30 })
  expect(reader.budgetExceeded).toBe(true)
})

test('list shows COST only when a session has a cost or a budget; show gives the budget and what is left', () => {
  const plain = sessionRecord('aaaa1111')
  expect(renderSessionList([plain]).split('\n')[0]).not.toContain('COST')
  const spent = sessionRecord('bbbb2222', {
    budget_usd: 1,
    cost: { total_tokens: 10, estimated_cost_usd: 0.42 },
  })
  expect(costLabel(spent)).toBe('$0.4200/$1.00')
  expect(costLabel(plain)).toBe('-')
  const table = renderSessionList([plain, spent])
  expect(table.split('\n')[0]).toMatch(/\bCOST\b/)
  expect(renderSessionDetail(spent)).toMatch(/Budget:\s+\$1\.00 \(\$0\.5800 left\)/)
})

test('config: a model name under pricing may hold dots; a bad price writes nothing', () => {
  const t = { file: join(tmpDir(), '.harness', 'config.json'), scope: 'project' as const }
  configSet(t, 'pricing.gpt-5.1', { input: 1.25, output: 10 })
  configSet(t, 'pricing.gpt-5.1.cached_input', 0.125)
  expect(configGet(t, 'pricing.gpt-5.1.output').value).toBe(10)
  expect(JSON.parse(readFileSync(t.file, 'utf8'))).toEqual({
    pricing: { 'gpt-5.1': { input: 1.25, output: 10, cached_input: 0.125 } },
  })
  expect(() => configSet(t, 'pricing.o3', { input: 1 })).toThrow(/nothing was written/)
  expect(() => configSet(t, 'pricing.o3.input', -1)).toThrow(/nothing was written/)
  configUnset(t, 'pricing.gpt-5.1')
  expect(JSON.parse(readFileSync(t.file, 'utf8'))).toEqual({})
})

test('claude gets what is left of the budget through --max-budget-usd, headless only; codex has no such flag', () => {
  // claude --help (claude-code 2.1.197): "--max-budget-usd <amount>  Maximum dollar amount to spend on API
  // calls (only works with --print)"
  const claude = resolveProvider('claude')
  const input = { provider: claude, kind: 'start' as const, prompt: 'task', budgetLeftUsd: 0.35 }
  expect(buildAgentInvocation({ ...input, mode: 'headless' }).args).toEqual([
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--permission-mode',
    'acceptEdits',
    '--max-budget-usd',
    '0.35',
    'task',
  ])
  expect(buildAgentInvocation({ ...input, mode: 'interactive' }).args).toEqual([
    '--permission-mode',
    'default',
    'task',
  ])
  const resume = buildAgentInvocation({
    ...input,
    mode: 'headless',
    kind: 'resume',
    agentSessionId: 'c0ffee00-0000-4000-8000-000000000000',
    budgetLeftUsd: 0.1 + 0.2,
  })
  expect(resume.args.slice(6, 8)).toEqual(['--max-budget-usd', '0.3'])
  const codex = buildAgentInvocation({ ...input, provider: resolveProvider('codex'), mode: 'headless' })
  expect(codex.args).not.toContain('--max-budget-usd')
})
