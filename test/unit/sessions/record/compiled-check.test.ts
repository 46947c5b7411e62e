import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import * as z from 'zod/mini'
// @ts-expect-error: the bench's generator is plain JavaScript
import { writeProject } from '../../../../bench/records.mjs'
import { compileCheck, REFER } from '../../../../src/sessions/record/compiled-check.js'
import { parseSessionRecord, SessionRecordSchema } from '../../../../src/sessions/record/schema.js'
import { SPEC_EXAMPLE, sessionRecord } from '../../../fixtures/records.js'
import { runningRecord } from '../../../helpers/fake-env.js'
import { tmpDir } from '../../../helpers/tmp.js'

const check = compileCheck(SessionRecordSchema)

/** Values put in place of every value of a record, one at a time: each kind of thing zod may refuse or change. */
const ODD_VALUES: unknown[] = [
  null,
  '',
  'x',
  'running',
  'RUNNING',
  'Paused',
  'start',
  'supervised',
  'root',
  0,
  -1,
  1.5,
  true,
  false,
  [],
  ['a'],
  [1],
  [null],
  {},
  { n: 1 },
  '2026-09-24T18:00:00Z',
  '2026-09-24T18:00:00.123+02:00',
  '2026-09-24T18:00:00',
  '2026-13-24T18:00:00Z',
  '2025-02-29T18:00:00Z',
  '2024-02-29T18:00:00Z',
  '2026-09-24 18:00:00Z',
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

/** The compiled check's answer for `value` agrees with zod's: referred, or zod's very result, key order too. */
function expectAgreement(value: unknown): 'accepted' | 'referred' {
  const fast = check?.(value)
  const zod = z.safeParse(SessionRecordSchema, value)
  if (fast === REFER) return 'referred'
  expect(zod.success, JSON.stringify(value)).toBe(true)
  if (zod.success) {
    expect(fast).toStrictEqual(zod.data)
    expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data))
  }
  return 'accepted'
}

function benchRecords(count: number): unknown[] {
  const dir = tmpDir()
  writeProject(dir, count, 7)
  const sessions = join(dir, '.harness', 'sessions')
  return readdirSync(sessions).map((name) => JSON.parse(readFileSync(join(sessions, name), 'utf8')))
}

describe('the compiled record check', () => {
  test('compiles the record schema (else every record would go to zod)', () => {
    expect(check).not.toBeNull()
  })

  test('accepts what harness writes, returning exactly what zod returns', () => {
    const records = [
      ...benchRecords(300),
      sessionRecord('abc12345'),
      runningRecord('run00001', { supervisor: [10, '20'], agent: [11, '21'] }),
      SPEC_EXAMPLE,
      { ...sessionRecord('order001'), zz_unknown: { nested: [1] }, aa_unknown: 'first' },
    ]
    for (const record of records) expect(expectAgreement(record)).toBe('accepted')
  })

  test('every value replaced by odd ones, or removed: never accepts what zod refuses, never differs', () => {
    const bases = [
      ...benchRecords(4),
      sessionRecord('mut00001', {
        stop_request: { action: 'kill', at: '2026-09-24T18:00:00Z', by_pid: 1 },
        container: {
          engine: 'podman',
          image: 'i',
          network: 'none',
          env: ['A'],
          id: 'c',
          created: 'x',
          name: 'n',
        },
        backend: 'container',
        cost: { total_tokens: 5, estimated_cost_usd: 0.1 },
        checkpoints: [{ n: 1, ref: 'r', commit: 'c', created_at: '2026-09-24T18:00:00Z', trigger: 'manual' }],
      }),
    ]
    let accepted = 0
    let referred = 0
    for (const base of bases) {
      for (const path of paths(base)) {
        for (const value of [undefined, ...ODD_VALUES]) {
          if (expectAgreement(withValue(base, path, value)) === 'accepted') accepted++
          else referred++
        }
      }
    }
    // Both answers must occur often, or the comparison proves little.
    expect(accepted).toBeGreaterThan(500)
    expect(referred).toBeGreaterThan(500)
  })

  test('refers what zod refuses: bad dates, unknown statuses and kinds, missing keys, prototypes', () => {
    const base = sessionRecord('ref00001')
    const cases: unknown[] = [
      { ...base, created_at: '2025-02-29T00:00:00Z' },
      { ...base, created_at: '2026-09-24T18:00:00' },
      { ...base, status: 'DONE' },
      { ...base, permission: 'root' },
      { ...base, pid: Number.POSITIVE_INFINITY },
      { ...base, runs: [{ ...base.runs?.[0], kind: 'restart' }] },
      { ...base, runs: 'none' },
      (({ worktree_dir: _gone, ...rest }) => rest)(base),
      JSON.parse(`{"__proto__": {"status": "RUNNING"}, ${JSON.stringify(base).slice(1)}`),
      Object.assign(Object.create({ inherited: 1 }), base),
      [base],
      null,
    ]
    for (const value of cases) expect(check?.(value)).toBe(REFER)
    // A status in lower case is read as zod reads it: upper-cased by the schema's own transform.
    expect(check?.({ ...base, status: 'running' })).toMatchObject({ status: 'RUNNING' })
    expect(parseSessionRecord({ ...base, status: 'running' })).toMatchObject({
      ok: true,
      record: { status: 'RUNNING' },
    })
    expect(parseSessionRecord({ ...base, status: 'DONE' })).toMatchObject({ ok: false })
  })

  test('lower bounds on numbers are checked as zod checks them (amounts are never negative)', () => {
    const bounded = compileCheck(
      z.looseObject({ a: z.number().check(z.gte(0)), b: z.optional(z.number().check(z.gt(0))) }),
    )
    expect(bounded?.({ a: 0, b: 1 })).toEqual({ a: 0, b: 1 })
    expect(bounded?.({ a: -1 })).toBe(REFER)
    expect(bounded?.({ a: 1, b: 0 })).toBe(REFER)
    expect(parseSessionRecord({ ...SPEC_EXAMPLE, cost: { estimated_cost_usd: -95 } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('cost.estimated_cost_usd'),
    })
  })

  test('a schema with something it does not know is not compiled at all', () => {
    expect(compileCheck(z.looseObject({ a: z.number().check(z.maximum(1)) }))).toBeNull()
    expect(compileCheck(z.strictObject({ a: z.string() }))).toBeNull()
    expect(compileCheck(z.looseObject({ constructor: z.optional(z.string()) }))).toBeNull()
    expect(compileCheck(z.union([z.string(), z.number()]))).toBeNull()
  })
})
