import { describe, expect, test } from 'vitest'
import { isSettledRecord } from '../../../src/cli/fast-entry.js'
import { type JsonShape, matchesShape } from '../../../src/cli/record-shape.js'
import { recordShape } from '../../../src/cli/record-shape-source.js'
import { parseSessionRecord } from '../../../src/sessions/record/schema.js'
import { SPEC_EXAMPLE, sessionRecord } from '../../fixtures/records.js'

/** A record with every kind of field the schema has, nested ones included. */
const FULL = sessionRecord('3f9a12c8', {
  updated_at: '2026-09-24T18:32:10.123+02:00',
  schema_version: 1,
  rev: 3,
  stop_request: { action: 'kill', at: '2026-09-24T18:30:00Z', by_pid: 1, grace_ms: 500 },
  checkpoints: [
    { n: 1, ref: 'refs/x', commit: 'abc', created_at: '2026-09-24T18:10:00Z', trigger: 'manual' },
  ],
  files_modified: ['a.ts'],
  metadata: { os: 'linux', hostname: 'h' },
  cost: { total_tokens: 10, estimated_cost_usd: 0.5 },
  seal: 'a'.repeat(64),
  sealed: true,
  unknown_field: { kept: true },
})
FULL.runs?.[0] && Object.assign(FULL.runs[0], { usage: { input_tokens: 1 }, detached: true })

/** Values of every JSON type, and strings that some fields accept and others refuse. */
const VALUES: unknown[] = [
  null,
  0,
  -1.5,
  true,
  '',
  'x',
  'running',
  'COMPLETED',
  'kill',
  'resume',
  'supervised',
  '2026-09-24T18:00:00Z',
  '2026-02-30T18:00:00Z',
  '2026-09-24 18:00:00',
  [],
  ['a'],
  [1],
  {},
  { n: 1 },
]

/** Every record made by replacing or removing one field, at any depth, of `value`. */
function* mutants(value: unknown): Generator<unknown> {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      for (const changed of mutants(item)) yield value.map((old, j) => (j === i ? changed : old))
    }
    return
  }
  if (value === null || typeof value !== 'object') return
  const object = value as Record<string, unknown>
  for (const key of Object.keys(object)) {
    const { [key]: _removed, ...rest } = object
    yield rest
    for (const replacement of VALUES) yield { ...object, [key]: replacement }
    for (const changed of mutants(object[key])) yield { ...object, [key]: changed }
  }
}

describe('the check the fast entry makes of a record (JSON Schema from the zod schema)', () => {
  const shape = recordShape()

  test('accepts the records harness writes, so that the fast entry answers for them', () => {
    for (const record of [FULL, SPEC_EXAMPLE, sessionRecord('x1')]) {
      expect(parseSessionRecord(record).ok).toBe(true)
      expect(isSettledRecord(shape, record)).toBe(true)
    }
  })

  test('accepts nothing that zod refuses, whatever one field is changed to (and no RUNNING record)', () => {
    let refused = 0
    let checked = 0
    for (const mutant of mutants(FULL)) {
      checked++
      const parsed = parseSessionRecord(mutant)
      const byZod = parsed.ok && parsed.record.status !== 'RUNNING'
      if (isSettledRecord(shape, mutant)) expect(byZod, JSON.stringify(mutant)).toBe(true)
      else refused++
    }
    // It tells them apart, rather than refusing everything.
    expect(checked).toBeGreaterThan(1000)
    expect(refused).toBeGreaterThan(checked / 4)
    expect(refused).toBeLessThan(checked)
  })

  test('lower bounds of amounts and counts: minimum and exclusiveMinimum', () => {
    expect(matchesShape({ type: 'number', minimum: 0 }, 0)).toBe(true)
    expect(matchesShape({ type: 'number', minimum: 0 }, -0.5)).toBe(false)
    expect(matchesShape({ type: 'number', exclusiveMinimum: 0 }, 0)).toBe(false)
    expect(matchesShape({ type: 'number', exclusiveMinimum: 0 }, 0.01)).toBe(true)
    expect(matchesShape({ minimum: 0 }, 'x')).toBe(false)
  })

  test('refuses a schema keyword it does not know, and a format without its pattern', () => {
    expect(matchesShape({ type: 'number', maximum: 0 } as JsonShape, -1)).toBe(false)
    expect(matchesShape({ type: 'string', format: 'date-time' }, '2026-09-24T18:00:00Z')).toBe(false)
    expect(
      matchesShape({ type: 'string', format: 'date-time', pattern: '^\\d{4}-' }, '2026-09-24T18:00:00Z'),
    ).toBe(true)
  })
})
