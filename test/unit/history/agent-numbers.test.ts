import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { EventReader, type Usage, type UsageFormat } from '../../../src/history/events.js'
import { sumCost } from '../../../src/history/usage.js'
import { spentUsd } from '../../../src/sessions/budget.js'

// Numbers from an agent's output are input (docs/security.md, "Numbers from agent output"): a cost or token
// count counts only when it is finite and not negative, and only in the provider's own format.

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/agent-output/${name}`, import.meta.url), 'utf8')

function usageOf(text: string, usageFormat?: UsageFormat | null): Usage | null {
  const reader = new EventReader({ usageFormat })
  for (const line of text.split('\n')) reader.push(line)
  reader.end()
  return reader.usage
}

/** A line of each format that reports a huge cost and token counts: what one agent could print as another. */
const HUGE: Record<UsageFormat, string> = {
  'claude-stream-json': JSON.stringify({
    type: 'result',
    subtype: 'success',
    total_cost_usd: 1000,
    usage: { input_tokens: 1e9, output_tokens: 1e9 },
  }),
  'codex-json': JSON.stringify({
    type: 'turn.completed',
    usage: { input_tokens: 1e9, cached_input_tokens: 0, output_tokens: 1e9 },
  }),
  'opencode-json': JSON.stringify({
    type: 'step_finish',
    part: { cost: 1000, tokens: { input: 1e9, output: 1e9, cache: { read: 0, write: 0 } } },
  }),
  'pi-json': JSON.stringify({
    type: 'message_end',
    message: { role: 'assistant', content: [], usage: { input: 1e9, output: 1e9, cost: { total: 1000 } } },
  }),
  'gemini-json': JSON.stringify({
    type: 'result',
    status: 'success',
    stats: { input_tokens: 1e9, output_tokens: 1e9, cached: 0 },
  }),
}

/** The same lines with every number negative, or not finite (JSON cannot hold NaN: a huge exponent is Infinity). */
const NEGATIVE: Record<UsageFormat, string[]> = {
  'claude-stream-json': [
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      total_cost_usd: -95,
      usage: { input_tokens: -1e6, output_tokens: -5 },
    }),
    '{"type":"result","subtype":"success","total_cost_usd":1e999,"usage":{"input_tokens":1e999}}',
  ],
  'codex-json': [
    JSON.stringify({
      type: 'turn.completed',
      usage: { input_tokens: -1e6, cached_input_tokens: -5, output_tokens: -5 },
    }),
  ],
  'opencode-json': [
    JSON.stringify({
      type: 'step_finish',
      part: { cost: -95, tokens: { input: -1e6, output: -5, cache: { read: -5, write: 0 } } },
    }),
    '{"type":"step_finish","part":{"cost":1e999,"tokens":{"input":1e999,"output":0}}}',
  ],
  'pi-json': [
    JSON.stringify({
      type: 'message_end',
      message: { role: 'assistant', content: [], usage: { input: -1e6, output: -5, cost: { total: -95 } } },
    }),
  ],
  'gemini-json': [
    JSON.stringify({
      type: 'result',
      status: 'success',
      stats: { input_tokens: -1e6, output_tokens: -5, cached: -5 },
    }),
  ],
}

const FORMATS: [UsageFormat, string][] = [
  ['claude-stream-json', 'claude.jsonl'],
  ['codex-json', 'codex.jsonl'],
  ['opencode-json', 'opencode.jsonl'],
  ['pi-json', 'pi.jsonl'],
  ['gemini-json', 'gemini-stream.jsonl'],
]

describe.each(FORMATS)('%s (%s)', (format, file) => {
  const text = fixture(file)
  const own = usageOf(text, format)

  test('its own format reads as before', () => {
    expect(own).not.toBeNull()
    expect(usageOf(text, format)).toEqual(usageOf(text))
  })

  test('a negative or infinite cost or token count in its own format is ignored', () => {
    const tampered = `${text}\n${NEGATIVE[format].join('\n')}\n`
    const usage = usageOf(tampered, format)
    expect(usage).toEqual(own)
    for (const value of Object.values(usage ?? {})) {
      if (value !== null) expect(value).toBeGreaterThanOrEqual(0)
    }
  })

  test("another format's usage lines count for nothing (each would report a huge cost and 2e9 tokens)", () => {
    const others = (Object.keys(HUGE) as UsageFormat[]).filter((f) => f !== format)
    const mixed = `${text}\n${others.map((f) => HUGE[f]).join('\n')}\n`
    expect(usageOf(mixed, format)).toEqual(own)
    // The control: read without a format (what `logs` shows), the same lines are counted.
    expect(usageOf(mixed)?.input_tokens ?? 0).toBeGreaterThan(1e9)
    // And its own format's huge line does count: the filter is by format, not by size.
    expect(usageOf(`${text}\n${HUGE[format]}\n`, format)?.output_tokens ?? 0).toBeGreaterThan(1e8)
  })
})

test('a provider without a format of its own reports no usage from any line', () => {
  const all = Object.values(HUGE).join('\n')
  expect(usageOf(all, null)).toBeNull()
})

test('the one line that defeated a budget (claude with a pi cost of -$95) counts nothing', () => {
  const lines = [
    JSON.stringify({ type: 'result', subtype: 'success', total_cost_usd: 0.2 }),
    JSON.stringify({
      type: 'message_end',
      message: { role: 'assistant', content: [], usage: { cost: { total: -95 } } },
    }),
    JSON.stringify({ type: 'result', subtype: 'success', total_cost_usd: 0.4 }),
  ].join('\n')
  expect(usageOf(lines, 'claude-stream-json')?.cost_usd).toBe(0.4)
})

test('a recorded negative amount (a record written before this check) is not counted either', () => {
  const runs = [
    { n: 1, kind: 'start' as const, started_at: '2026-01-01T00:00:00.000Z', usage: { cost_usd: -95 } },
    { n: 2, kind: 'resume' as const, started_at: '2026-01-01T01:00:00.000Z', usage: { cost_usd: 0.5 } },
  ]
  expect(spentUsd(runs, null)).toBe(0.5)
  expect(sumCost(runs)?.estimated_cost_usd).toBe(0.5)
})
