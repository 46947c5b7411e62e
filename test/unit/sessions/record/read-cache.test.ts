import { readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { checkIdentity } from '../../../../src/process/identity.js'
import { listStore } from '../../../../src/sessions/query/query.js'
import { verifiedOrNull } from '../../../../src/sessions/record/seal.js'
import { SessionStore, type StoreProblem } from '../../../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { tmpDir } from '../../../helpers/tmp.js'

/** A store whose listings begin `ahead` ms from now: records written just now count as changed long ago. */
function storeAt(dir: string, ahead: number) {
  const sealer = testSealer()
  const problems: StoreProblem[] = []
  const store = new SessionStore(dir, {
    sealer,
    warn: (p) => problems.push(p),
    now: () => Date.now() + ahead,
  })
  return { store, checks: vi.spyOn(sealer, 'check'), problems }
}

const LONG_AFTER = 60_000

/** The sessions folder of a new project, with `count` records. */
async function project(count: number): Promise<string> {
  const dir = join(tmpDir(), '.harness', 'sessions')
  const { store } = storeAt(dir, 0)
  for (let i = 0; i < count; i++) await store.create(sessionRecord(`cace000${i}`, { prompt: `task ${i}` }))
  return dir
}

/** Writes `text` over the file in place until the file's times show it (a write in the same clock tick keeps them). */
function rewrite(path: string, text: string): void {
  const before = statSync(path)
  for (let tries = 0; tries < 100_000; tries++) {
    writeFileSync(path, text)
    const now = statSync(path)
    if (now.ctimeMs !== before.ctimeMs || now.mtimeMs !== before.mtimeMs) return
  }
  throw new Error(`${path}: its times never changed`)
}

describe('the read cache of listings', () => {
  it('a record verified by one listing is read by the next without a seal check, as the same record', async () => {
    const dir = await project(3)
    const first = storeAt(dir, LONG_AFTER)
    const listed = first.store.list()
    expect(first.checks).toHaveBeenCalledTimes(3)

    const second = storeAt(dir, LONG_AFTER)
    const again = second.store.listWithin(Number.POSITIVE_INFINITY) ?? []
    expect(second.checks).not.toHaveBeenCalled()
    expect(JSON.stringify(again)).toBe(JSON.stringify(listed))
    for (const record of again) {
      expect(record.sealed).toBe(true)
      expect(verifiedOrNull(record)).not.toBeNull()
    }
    // One at a time (a listing too big to hold) too, then kept by endListing.
    const third = storeAt(dir, LONG_AFTER)
    expect(third.store.read('cace0001', { listing: true })?.sealed).toBe(true)
    third.store.endListing()
    expect(third.checks).not.toHaveBeenCalled()
  })

  it('a record changed since, in place and of the same size, is checked again: shown foreign or corrupt', async () => {
    const dir = await project(2)
    storeAt(dir, LONG_AFTER).store.list()
    const path = join(dir, 'cace0000.json')
    const text = readFileSync(path, 'utf8')
    rewrite(path, text.replace('task 0', 'task X'))
    rewrite(join(dir, 'cace0001.json'), text.slice(0, 40).padEnd(text.length))

    const { store, checks, problems } = storeAt(dir, LONG_AFTER)
    const records = store.list()
    expect(checks).toHaveBeenCalledTimes(1)
    expect(records).toHaveLength(1)
    expect(records[0]).toMatchObject({
      id: 'cace0000',
      prompt: 'task X',
      sealed: false,
      seal_problem: 'changed',
    })
    expect(verifiedOrNull(records[0] as NonNullable<(typeof records)[0]>)).toBeNull()
    expect(problems.map((p) => p.path)).toEqual([join(dir, 'cace0001.json')])
  })

  it('names only records that changed well before the listing began, and only sealed ones', async () => {
    const dir = await project(2)
    writeFileSync(
      join(dir, 'f0re1gn0.json'),
      JSON.stringify({ ...sessionRecord('f0re1gn0'), seal: 'a'.repeat(64) }),
    )
    storeAt(dir, 0).store.list()
    const soon = storeAt(dir, 0)
    soon.store.list()
    expect(soon.checks).toHaveBeenCalledTimes(3)

    storeAt(dir, LONG_AFTER).store.list()
    const later = storeAt(dir, LONG_AFTER)
    const records = later.store.list()
    expect(later.checks).toHaveBeenCalledTimes(1)
    expect(records.find((r) => r.id === 'f0re1gn0')).toMatchObject({ sealed: false })
  })

  it('is kept beside the key, not in the project, and forgets records that are gone', async () => {
    const dir = await project(2)
    storeAt(dir, LONG_AFTER).store.list()
    const cacheDir = join(testSealer().keyFile, '..', 'verified')
    const scope = realpathSync(join(dir, '..', '..'))
    const named = () =>
      readdirSync(cacheDir)
        .map((name) => JSON.parse(readFileSync(join(cacheDir, name), 'utf8')))
        .find((file) => file.scope === scope)
    expect(Object.keys(named().records).sort()).toEqual(['cace0000', 'cace0001'])
    const { store } = storeAt(dir, LONG_AFTER)
    await store.delete('cace0001')
    store.list()
    expect(Object.keys(named().records)).toEqual(['cace0000'])
  })

  it('a listing too big to hold sorts the records it vouches for by what it learnt, without reading them', async () => {
    const dir = await project(3)
    const inMemory = storeAt(dir, LONG_AFTER)
    const listed = []
    for await (const view of listStore(inMemory.store, { sort: 'created' }, 100, checkIdentity, new Date()))
      listed.push(view)

    const { store, checks } = storeAt(dir, LONG_AFTER)
    const onDisk = JSON.parse(readFileSync(join(dir, 'cace0002.json'), 'utf8'))
    expect(store.peek('cace0002', { listing: true })).toEqual({
      id: 'cace0002',
      status: onDisk.status,
      created_at: onDisk.created_at,
      updated_at: onDisk.updated_at,
    })
    expect(store.bytesRead).toBe(0)
    const twoPasses = []
    for await (const view of listStore(store, { sort: 'created' }, 0, checkIdentity, new Date()))
      twoPasses.push(view)
    expect(JSON.stringify(twoPasses)).toBe(JSON.stringify(listed))
    expect(checks).not.toHaveBeenCalled()
    // Changed since: read, as before.
    rewrite(join(dir, 'cace0002.json'), readFileSync(join(dir, 'cace0002.json'), 'utf8'))
    const after = storeAt(dir, LONG_AFTER).store
    after.peek('cace0002', { listing: true })
    expect(after.bytesRead).toBeGreaterThan(0)
  })
})
