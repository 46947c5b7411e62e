import { describe, expect, test } from 'vitest'
import { parseSessionRecord } from '../../../../src/sessions/record/schema.js'
import { SPEC_EXAMPLE } from '../../../fixtures/records.js'

describe('SessionRecordSchema', () => {
  test("the README's example record validates unchanged", () => {
    const parsed = parseSessionRecord(SPEC_EXAMPLE)
    expect(parsed.ok).toBe(true)
    if (parsed.ok) expect(parsed.record).toEqual(SPEC_EXAMPLE)
  })

  test('the fields harness writes are described: read back typed, wrong types refused', () => {
    const written = {
      ...SPEC_EXAMPLE,
      permission: 'autonomous',
      base_ref: 'main',
      start_subdir: 'packages/api',
      extra_args: ['--flag', 'value'],
      stop_request: { action: 'kill', at: '2026-09-24T18:00:00.000Z', by_pid: 42, grace_ms: 1500 },
      runs: [{ n: 1, kind: 'start', started_at: '2026-09-24T18:00:00.000Z', error: 'rate limited' }],
    }
    const parsed = parseSessionRecord(written)
    expect(parsed.ok).toBe(true)
    if (!parsed.ok) return
    expect(parsed.record.extra_args).toEqual(['--flag', 'value'])
    expect(parsed.record.stop_request?.grace_ms).toBe(1500)
    expect(parsed.record.runs?.[0]?.error).toBe('rate limited')
    for (const wrong of [
      { permission: 'yolo' },
      { extra_args: '--flag' },
      { base_ref: 7 },
      { start_subdir: ['a'] },
      { stop_request: { ...written.stop_request, grace_ms: '1.5s' } },
      { runs: [{ ...written.runs[0], error: { message: 'x' } }] },
    ]) {
      expect(parseSessionRecord({ ...written, ...wrong }).ok, JSON.stringify(wrong)).toBe(false)
    }
  })

  test('status is read case-insensitively and normalised to upper case', () => {
    const parsed = parseSessionRecord({ ...SPEC_EXAMPLE, status: 'running' })
    expect(parsed.ok && parsed.record.status).toBe('RUNNING')
  })

  test('unknown fields are kept, also nested ones', () => {
    const parsed = parseSessionRecord({
      ...SPEC_EXAMPLE,
      future_field: { a: 1 },
      runs: [{ n: 1, kind: 'start', started_at: '2026-09-24T18:00:00.000Z', future_run_field: 'x' }],
    })
    expect(parsed.ok).toBe(true)
    if (!parsed.ok) return
    expect((parsed.record as Record<string, unknown>).future_field).toEqual({ a: 1 })
    expect((parsed.record.runs?.[0] as Record<string, unknown> | undefined)?.future_run_field).toBe('x')
  })

  test('optional fields may be null', () => {
    const parsed = parseSessionRecord({
      ...SPEC_EXAMPLE,
      pid: null,
      exit_code: null,
      completed_at: null,
      model: null,
    })
    expect(parsed.ok).toBe(true)
  })

  test.each([
    [{ ...SPEC_EXAMPLE, status: 'DONE' }, 'status'],
    [{ ...SPEC_EXAMPLE, created_at: 'yesterday' }, 'created_at'],
    [{ ...SPEC_EXAMPLE, id: 42 }, 'id'],
    [{ ...SPEC_EXAMPLE, runs: [{ n: 1 }] }, 'runs.0'],
    [[1, 2], '(record)'],
  ])('invalid record %# names the field', (value, field) => {
    const parsed = parseSessionRecord(value)
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.reason).toContain(field)
  })
})
