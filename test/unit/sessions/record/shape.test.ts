import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import * as z from 'zod/mini'
// @ts-expect-error: the bench's generator is plain JavaScript
import { writeProject } from '../../../../bench/records.mjs'
import { parseSessionRecord, reshapeSessionRecord } from '../../../../src/sessions/record/schema.js'
import { array, describeShape, looseObject, optional, string } from '../../../../src/sessions/record/shape.js'
import { SPEC_EXAMPLE, sessionRecord } from '../../../fixtures/records.js'
import { SessionRecordSchema } from '../../../fixtures/zod-record-schema.js'
import { runningRecord } from '../../../helpers/fake-env.js'
import { tmpDir } from '../../../helpers/tmp.js'

/** Values put in place of every value of a record, one at a time: each kind of thing the schema may refuse or change. */
const ODD_VALUES: unknown[] = [
  null,
  '',
  'x',
  'running',
  'RUNNING',
  'Paused',
  'start',
  'kill',
  'container',
  'supervised',
  'root',
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  [],
  ['a'],
  [1],
  [null],
  {},
  { n: 1 },
  { kind: 'x' },
  new Date(0),
  '2026-09-24T18:00:00Z',
  '2026-09-24T18:00:00.123+02:00',
  '2026-09-24T18:00:00',
  '2026-09-24T18:00Z',
  '2026-13-24T18:00:00Z',
  '2025-02-29T18:00:00Z',
  '2024-02-29T18:00:00Z',
  '2000-02-29T00:00:00Z',
  '1900-02-29T00:00:00Z',
  '2026-09-24 18:00:00Z',
  '2026-09-24T24:00:00Z',
  '2026-09-24T18:00:00+2:00',
  ' 2026-09-24T18:00:00Z',
]

/** Every path to a value inside `value` (objects and arrays), the root excluded. */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return []
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((item, i) => [i, item])
    : Object.entries(value)
  return entries.flatMap(([key, item]) => [[...prefix, key], ...paths(item, [...prefix, key])])
}

function withValue(record: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(record) as Record<string | number, unknown>
  let at = copy
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>
  const last = path[path.length - 1] as string | number
  if (value === undefined) delete at[last]
  else at[last] = value
  return copy
}

/** zod's answer in the form parseSessionRecord gives it (the reason: the first three issues). */
function zodAnswer(value: unknown) {
  const result = z.safeParse(SessionRecordSchema, value)
  if (result.success) return { ok: true, record: result.data }
  const reason = result.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(record)'}: ${issue.message}`)
    .join('; ')
  return { ok: false, reason }
}

/** The validator's answer for `value` is zod's: accepted or refused alike, the same value (key order too), the same reason. */
function expectAgreement(value: unknown): boolean {
  const zod = zodAnswer(value)
  const { asIs: _, ...ours } = { asIs: undefined, ...parseSessionRecord(value) }
  expect(ours, JSON.stringify(value)).toStrictEqual(zod)
  if (ours.ok && zod.ok) expect(JSON.stringify(ours.record)).toBe(JSON.stringify(zod.record))
  return ours.ok
}

function benchRecords(count: number): unknown[] {
  const dir = tmpDir()
  writeProject(dir, count, 7)
  const sessions = join(dir, '.harness', 'sessions')
  return readdirSync(sessions).map((name) => JSON.parse(readFileSync(join(sessions, name), 'utf8')))
}

/** A record with every kind of field the schema has, nested ones included. */
const FULL = sessionRecord('mut00001', {
  updated_at: '2026-09-24T18:32:10.123+02:00',
  schema_version: 1,
  rev: 3,
  stop_request: { action: 'kill', at: '2026-09-24T18:00:00Z', by_pid: 1, grace_ms: 500, reason: 'budget' },
  container: {
    engine: 'podman',
    image: 'i',
    network: 'none',
    env: ['A'],
    id: 'c',
    created: 'x',
    name: 'n',
    collected: { kind: 'bundle' },
  },
  backend: 'container',
  cost: { total_tokens: 5, estimated_cost_usd: 0.1 },
  checkpoints: [
    { n: 1, ref: 'r', commit: 'c', created_at: '2026-09-24T18:00:00Z', trigger: 'manual', folded: 2 },
  ],
  metadata: { os: 'linux', hostname: 'h' },
  files_modified: ['a.ts'],
  seal: 'a'.repeat(64),
  sealed: true,
  unknown_field: { kept: [1, { deep: true }] },
  prompt_file: { sha256: 'b'.repeat(64), bytes: 70_000 },
  files_modified_total: 300,
  budget_usd: 2,
})
FULL.runs?.[0] &&
  Object.assign(FULL.runs[0], {
    usage: { input_tokens: 1, cost_usd: 0.5 },
    detached: true,
    agent_exited: false,
  })

describe('the record validator', () => {
  test('accepts what harness writes, returning exactly what zod returned', () => {
    const records = [
      ...benchRecords(300),
      sessionRecord('abc12345'),
      runningRecord('run00001', { supervisor: [10, '20'], agent: [11, '21'] }),
      SPEC_EXAMPLE,
      FULL,
      { ...sessionRecord('order001'), zz_unknown: { nested: [1] }, aa_unknown: 'first' },
      // Described keys out of order: returned in the described order, the others after them.
      Object.fromEntries(Object.entries(FULL).reverse()),
    ]
    for (const record of records) expect(expectAgreement(record)).toBe(true)
  })

  test('every value replaced by odd ones, or removed: accepted, refused and reported as zod did', () => {
    const bases = [...benchRecords(4), FULL]
    let accepted = 0
    let refused = 0
    for (const base of bases) {
      for (const path of paths(base)) {
        for (const value of [undefined, ...ODD_VALUES]) {
          if (expectAgreement(withValue(base, path, value))) accepted++
          else refused++
        }
      }
    }
    // Both answers must occur often, or the comparison proves little.
    expect(accepted).toBeGreaterThan(2000)
    expect(refused).toBeGreaterThan(2000)
  })

  test('two and more faults at once: the first three reported, in zod order', () => {
    const base = structuredClone(FULL) as Record<string, unknown>
    const cases: unknown[] = [
      { ...base, id: 1, status: 'DONE' },
      { ...base, created_at: 'x', runs: [{ n: 'one', kind: 'restart' }], metadata: [] },
      { ...base, runs: [{}, { n: 1 }], checkpoints: [null, 'x'], cost: { total_tokens: '5' } },
      { status: 7 },
      {},
    ]
    for (const value of cases) expect(expectAgreement(value)).toBe(false)
  })

  test('what is not a plain record: prototypes, __proto__, arrays and other values', () => {
    const base = sessionRecord('ref00001')
    const cases: unknown[] = [
      JSON.parse(`{"__proto__": {"status": "RUNNING"}, ${JSON.stringify(base).slice(1)}`),
      Object.assign(Object.create({ inherited: 1 }), base),
      Object.assign(Object.create(null), base),
      {
        ...base,
        runs: [Object.assign(Object.create({ kind: 'start' }), { n: 1, started_at: base.created_at })],
      },
      [base],
      null,
      'record',
      42,
      undefined,
    ]
    for (const value of cases) expectAgreement(value)
  })

  test('asIs: the record holds the parsed content unchanged, only its keys in another order', () => {
    const asIs = (value: unknown) => {
      const parsed = parseSessionRecord(value)
      return parsed.ok && parsed.asIs
    }
    const base = sessionRecord('asis0001')
    expect(asIs(JSON.parse(JSON.stringify(FULL)))).toBe(true)
    expect(asIs(Object.fromEntries(Object.entries(base).reverse()))).toBe(true)
    expect(asIs({ ...base, status: 'completed' })).toBe(false)
    expect(asIs(JSON.parse(`{"__proto__": {"a": 1}, ${JSON.stringify(base).slice(1)}`))).toBe(false)
    expect(asIs(Object.assign(Object.create({ inherited: 1 }), base))).toBe(false)
    expect(asIs({ ...base, runs: [Object.assign(Object.create({ kind: 'start' }), base.runs?.[0])] })).toBe(
      false,
    )
  })

  test('a status in any case reads upper-cased; anything else is refused with its reason', () => {
    expect(parseSessionRecord({ ...SPEC_EXAMPLE, status: 'running' })).toMatchObject({
      ok: true,
      record: { status: 'RUNNING' },
    })
    expect(parseSessionRecord({ ...SPEC_EXAMPLE, status: 'DONE' })).toEqual({
      ok: false,
      reason: 'status: Invalid option: expected one of "RUNNING"|"PAUSED"|"COMPLETED"|"FAILED"|"KILLED"',
    })
  })

  test('reshape gives, without a check, what the validator gives for every value it accepted as it is', () => {
    let compared = 0
    for (const base of [...benchRecords(4), JSON.parse(JSON.stringify(FULL))]) {
      const variants = [base, Object.fromEntries(Object.entries(base).reverse())]
      for (const path of paths(base))
        for (const value of ODD_VALUES) variants.push(withValue(base, path, value))
      for (const variant of variants) {
        const value = JSON.parse(JSON.stringify(variant))
        const parsed = parseSessionRecord(value)
        if (!parsed.ok || !parsed.asIs) continue
        const reshaped = reshapeSessionRecord(value)
        expect(reshaped).toStrictEqual(parsed.record)
        expect(JSON.stringify(reshaped)).toBe(JSON.stringify(parsed.record))
        compared++
      }
    }
    expect(compared).toBeGreaterThan(1000)
  })

  test("a description's text changes with what it accepts and with its keys' order", () => {
    const texts = [
      looseObject({ a: string, b: string }),
      looseObject({ b: string, a: string }),
      looseObject({ a: string, b: optional(string) }),
      looseObject({ a: string, b: array(string) }),
      looseObject({ a: string, b: looseObject({ c: string }) }),
    ].map(describeShape)
    expect(new Set(texts).size).toBe(texts.length)
    expect(describeShape(looseObject({ a: string, b: string }))).toBe(texts[0])
  })

  test('a described key the prototype has is refused when the description is made', () => {
    expect(() => looseObject({ constructor: optional(string) })).toThrow(/constructor/)
  })
})
