import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  ARG_INLINE_CHARS,
  boundFiles,
  FILES_KEPT,
  fullPrompt,
  PROMPT_INLINE_BYTES,
  promptPathFor,
} from '../../../../src/sessions/record/bounds.js'
import type { Checkpoint } from '../../../../src/sessions/record/schema.js'
import { SessionStore } from '../../../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { tmpDir } from '../../../helpers/tmp.js'

// Limits where a record is written (docs/security.md, "Limits at write time"): harness never writes a record it
// could not read back.

function newStore() {
  const dir = join(tmpDir(), 'sessions')
  return { store: new SessionStore(dir, { sealer: testSealer() }), dir }
}

const checkpoint = (n: number): Checkpoint => ({
  n,
  ref: `refs/harness/limt0001/checkpoints/${n}`,
  commit: 'a'.repeat(40),
  head: 'b'.repeat(40),
  message: `interval checkpoint ${n}`,
  created_at: '2026-01-01T00:00:00.000Z',
  trigger: 'interval',
  files_changed: 3,
  tokens_used: null,
})

describe('a record that would pass the read limit is never written', () => {
  test('2,800 checkpoints: RECORD_TOO_BIG, the record as it was, no temp file left', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('limt0001', { checkpoints: [checkpoint(0)] }))
    const before = readFileSync(join(dir, 'limt0001.json'))
    const many = Array.from({ length: 2800 }, (_, n) => checkpoint(n))
    await expect(store.update('limt0001', (r) => ({ ...r, checkpoints: many }))).rejects.toMatchObject({
      code: 'RECORD_TOO_BIG',
      exitCode: 1,
      message: expect.stringContaining('it was not written'),
    })
    expect(readFileSync(join(dir, 'limt0001.json'))).toEqual(before)
    expect(store.get('limt0001')?.checkpoints).toHaveLength(1)
    expect(readdirSync(dir).sort()).toEqual(['limt0001.json'])
  })

  test('a value the schema refuses on read (a negative cost) is refused on write too', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('limt0002'))
    const before = readFileSync(join(dir, 'limt0002.json'))
    await expect(
      store.update('limt0002', (r) => ({ ...r, cost: { total_tokens: 10, estimated_cost_usd: -95 } })),
    ).rejects.toMatchObject({
      code: 'RECORD_INVALID',
      message: expect.stringContaining('estimated_cost_usd'),
    })
    await expect(store.create(sessionRecord('limt0003', { budget_usd: 0 }))).rejects.toMatchObject({
      code: 'RECORD_INVALID',
    })
    expect(readFileSync(join(dir, 'limt0002.json'))).toEqual(before)
    expect(store.exists('limt0003')).toBe(false)
  })
})

describe('a long prompt goes to a file beside the record', () => {
  const long = `${'fix the flaky tests. '.repeat(30_000)}é\u{1F600}`

  test('the record keeps its first characters and the sha256; the file is 0600; it reads back whole', async () => {
    const { store, dir } = newStore()
    const created = await store.create(sessionRecord('long0001', { prompt: long }))
    const file = promptPathFor(dir, 'long0001')
    expect(readFileSync(file, 'utf8')).toBe(long)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, 'long0001.json')).size).toBeLessThan(16 * 1024)
    expect(created.prompt_file).toMatchObject({ bytes: Buffer.byteLength(long) })
    expect(created.prompt?.length).toBeLessThanOrEqual(1000)
    expect(long.startsWith(created.prompt as string)).toBe(true)
    const read = store.get('long0001')
    expect(read?.sealed).toBe(true)
    expect(fullPrompt(dir, read as never)).toEqual({ text: long })
    // An update keeps it as it is: the preview is not taken for a new prompt.
    await store.update('long0001', (r) => ({ ...r, status: 'COMPLETED', exit_code: 0 }))
    expect(fullPrompt(dir, store.get('long0001') as never)).toEqual({ text: long })
    // Deleted with its record.
    await store.delete('long0001')
    expect(readdirSync(dir)).toEqual([])
  })

  test('a prompt file changed or gone: the first characters, and why', async () => {
    const { store, dir } = newStore()
    await store.create(sessionRecord('long0002', { prompt: long }))
    writeFileSync(promptPathFor(dir, 'long0002'), long.replace('flaky', 'FLAKY'))
    const changed = fullPrompt(dir, store.get('long0002') as never)
    expect(changed.problem).toContain('changed after harness wrote it')
    expect(changed.text?.length).toBeLessThanOrEqual(1000)
  })

  test('a prompt up to the threshold stays in the record', async () => {
    const { store, dir } = newStore()
    const fits = 'x'.repeat(PROMPT_INLINE_BYTES)
    await store.create(sessionRecord('long0003', { prompt: fits }))
    expect(store.get('long0003')?.prompt).toBe(fits)
    expect(readdirSync(dir)).toEqual(['long0003.json'])
  })

  test('run arguments are clipped in the record (the agent got them whole)', async () => {
    const { store } = newStore()
    const record = sessionRecord('long0004')
    const runs = (record.runs ?? []).map((run) => ({ ...run, args: ['claude', '-p', long] }))
    const created = await store.create({ ...record, runs })
    const args = created.runs?.[0]?.args ?? []
    expect(args.slice(0, 2)).toEqual(['claude', '-p'])
    expect(args[2]?.length).toBeLessThan(ARG_INLINE_CHARS)
    expect(args[2]).toContain(`(${long.length} characters in all; not recorded)`)
  })
})

test('files_modified keeps the first paths and counts them all', () => {
  const files = Array.from({ length: 5000 }, (_, i) => `src/generated/file-${i}.ts`)
  expect(boundFiles(files)).toEqual({ kept: files.slice(0, FILES_KEPT), total: 5000 })
  const long = Array.from({ length: 500 }, (_, i) => `${'d/'.repeat(1000)}${i}`)
  const bounded = boundFiles(long)
  expect(bounded.kept.length).toBeLessThan(200)
  expect(bounded.total).toBe(500)
})
