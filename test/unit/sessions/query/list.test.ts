import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { beforeAll, describe, expect, test } from 'vitest'
import { Output } from '../../../../src/cli/output.js'
import { checkIdentity, hostFacts } from '../../../../src/process/identity.js'
import { type ListFilters, listStore } from '../../../../src/sessions/query/query.js'
import type { SessionView } from '../../../../src/sessions/query/reconcile.js'
import { SessionStore, type StoreProblem } from '../../../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { tmpDir } from '../../../helpers/tmp.js'

async function collect(items: AsyncIterable<SessionView>): Promise<SessionView[]> {
  const all: SessionView[] = []
  for await (const item of items) all.push(item)
  return all
}

/** 24 records: mixed statuses, agents and times (some equal), a corrupt file, and a stale RUNNING one. */
async function store(): Promise<{ store: SessionStore; problems: StoreProblem[] }> {
  const dir = join(tmpDir(), 'sessions')
  const problems: StoreProblem[] = []
  const store = new SessionStore(dir, { sealer: testSealer(), warn: (p) => problems.push(p) })
  const statuses = ['COMPLETED', 'FAILED', 'KILLED', 'PAUSED'] as const
  for (let i = 0; i < 24; i++) {
    const day = String(1 + (i % 9)).padStart(2, '0')
    await store.create(
      sessionRecord(`list${String(i).padStart(4, '0')}`, {
        provider: i % 3 ? 'claude' : 'codex',
        status: statuses[i % 4],
        created_at: `2026-09-${day}T10:00:00.000Z`,
      }),
    )
  }
  // Its processes never existed on this host: stale, so reading it reconciles it to PAUSED.
  const stale = sessionRecord('stale001', { status: 'RUNNING', created_at: '2026-09-05T10:00:00.000Z' })
  stale.runs = stale.runs?.map((run) => ({ ...run, ended_at: null, ...hostFacts() }))
  await store.create(stale)
  writeFileSync(join(dir, 'bad00001.json'), '{"id": "bad00001", "status": ')
  return { store, problems }
}

describe('listing a store held in memory or in two passes', () => {
  let made: Awaited<ReturnType<typeof store>>
  beforeAll(async () => {
    made = await store()
  })

  test.each<ListFilters>([
    { sort: 'created' },
    { sort: 'updated' },
    { sort: 'created', status: ['PAUSED'] },
    { sort: 'created', agent: ['codex'] },
    { sort: 'created', limit: 5 },
    { sort: 'updated', status: ['FAILED', 'KILLED'], agent: ['claude'], limit: 3 },
  ])('%j: the same sessions in the same order, corrupt files reported alike', async (filters) => {
    const { store: s, problems } = made
    problems.splice(0)
    const inMemory = await collect(listStore(s, filters, 100_000, checkIdentity, new Date()))
    const reportedInMemory = problems.splice(0)
    const twoPasses = await collect(listStore(s, filters, 0, checkIdentity, new Date()))
    expect(twoPasses).toEqual(inMemory)
    expect(inMemory.length).toBeGreaterThan(0)
    if (!filters.status && !filters.agent && !filters.limit) {
      expect(inMemory.map((v) => v.id)).toContain('stale001')
      expect(inMemory.find((v) => v.id === 'stale001')?.status).toBe('PAUSED')
      expect(problems.map((p) => p.path)).toEqual(reportedInMemory.map((p) => p.path))
      expect(problems).toHaveLength(1)
    }
  })
})

describe('--json list output', () => {
  test.each([0, 1, 3, 20, 21, 400])(
    '%i items stream out as the same bytes as one pretty-printed array',
    async (n) => {
      const items = Array.from({ length: n }, (_, i) => ({
        id: `s${i}`,
        nested: { list: [i, 'x'], empty: {} },
      }))
      const stdout = new PassThrough()
      const chunks: Buffer[] = []
      stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
      const out = new Output(
        { json: true, color: false, quiet: false },
        stdout as unknown as NodeJS.WriteStream,
        new PassThrough() as unknown as NodeJS.WriteStream,
        {},
      )
      async function* produce() {
        yield* items
      }
      await out.resultList(produce(), () => '')
      expect(Buffer.concat(chunks).toString('utf8')).toBe(`${JSON.stringify(items, null, 2)}\n`)
    },
  )
})
