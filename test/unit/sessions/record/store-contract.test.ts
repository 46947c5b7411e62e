import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import type { RecordStore } from '../../../../src/sessions/ports.js'
import { SessionStore } from '../../../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { MemoryStore } from '../../../helpers/fake-env.js'
import { tmpDir } from '../../../helpers/tmp.js'

/**
 * The store's contract, run against the real store on a temp folder and the fake the direct service tests use:
 * if the two part ways, a service test through the fake would prove nothing.
 */
const stores: [string, () => RecordStore][] = [
  ['SessionStore', () => new SessionStore(join(tmpDir(), 'sessions'), { sealer: testSealer() })],
  ['MemoryStore', () => new MemoryStore()],
]

describe.each(stores)('%s honours the record store contract', (_name, make) => {
  test('create stamps rev 1 and updated_at, seals, and is read back as written', async () => {
    const store = make()
    const created = await store.create(sessionRecord('cont0001', { status: 'RUNNING' }))
    expect(created).toMatchObject({ id: 'cont0001', rev: 1, sealed: true, status: 'RUNNING' })
    expect(Date.parse(created.updated_at ?? '')).toBeGreaterThan(0)
    expect(store.get('cont0001')).toMatchObject({ id: 'cont0001', rev: 1, status: 'RUNNING' })
    expect(store.exists('cont0001')).toBe(true)
    expect(store.ids()).toEqual(['cont0001'])
  })

  test('create of a taken id is SESSION_EXISTS', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001'))
    await expect(store.create(sessionRecord('cont0001'))).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
  })

  test('update bumps rev; an update that changes nothing writes nothing', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001', { status: 'RUNNING' }))
    const paused = await store.update('cont0001', (r) => ({ ...r, status: 'PAUSED' }))
    expect(paused).toMatchObject({ rev: 2, status: 'PAUSED' })
    const same = await store.update('cont0001', () => undefined)
    expect(same.rev).toBe(2)
    expect(store.get('cont0001')?.rev).toBe(2)
  })

  test('paused_at is set by the write that makes the session PAUSED, and kept after', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001', { status: 'RUNNING' }))
    expect(store.get('cont0001')?.paused_at ?? null).toBeNull()
    const paused = await store.update('cont0001', (r) => ({ ...r, status: 'PAUSED' }))
    expect(paused.paused_at).toBe(paused.updated_at)
    const touched = await store.update('cont0001', (r) => ({ ...r, prompt: 'again' }))
    expect(touched.paused_at).toBe(paused.paused_at)
    const resumed = await store.update('cont0001', (r) => ({ ...r, status: 'RUNNING' }))
    expect(resumed.paused_at).toBe(paused.paused_at)
    // A caller cannot forget it: a pause that does not name it still gets it.
    const again = await store.update('cont0001', (r) => ({ ...r, status: 'PAUSED', paused_at: null }))
    expect(again.paused_at).toBe(again.updated_at)
    expect(store.get('cont0001')?.paused_at).toBe(again.updated_at)
  })

  test('a record with a name takes it: idOfName finds it; a taken name, or an id, is NAME_TAKEN', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001', { name: 'auth' }))
    expect(store.idOfName('auth')).toBe('cont0001')
    expect(store.idOfName('other')).toBeNull()
    await expect(store.create(sessionRecord('cont0002', { name: 'auth' }))).rejects.toMatchObject({
      code: 'NAME_TAKEN',
      exitCode: 4,
      message: 'the name "auth" is taken by session cont0001',
    })
    expect(store.exists('cont0002')).toBe(false)
    await expect(store.create(sessionRecord('cont0003', { name: 'cont0001' }))).rejects.toMatchObject({
      code: 'NAME_TAKEN',
      message: 'the name "cont0001" is the id of session cont0001',
    })
    await expect(store.create(sessionRecord('cont0004', { name: 'beef12' }))).rejects.toMatchObject({
      code: 'INVALID_NAME',
      exitCode: 2,
    })
    // Once its session is gone, the name is free again.
    await store.delete('cont0001')
    expect(store.idOfName('auth')).toBeNull()
    await store.create(sessionRecord('cont0005', { name: 'auth' }))
    expect(store.idOfName('auth')).toBe('cont0005')
  })

  test('the function given to update gets a copy: changing it in place writes nothing', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001', { status: 'RUNNING' }))
    await store.update('cont0001', (r) => {
      r.status = 'KILLED'
      return undefined
    })
    expect(store.get('cont0001')?.status).toBe('RUNNING')
  })

  test('a missing record: get is null, update is SESSION_NOT_FOUND, exists is false', async () => {
    const store = make()
    await store.create(sessionRecord('cont0002'))
    expect(store.get('none0001')).toBeNull()
    expect(store.exists('none0001')).toBe(false)
    await expect(store.update('none0001', (r) => r)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  test('delete runs prepare with the current record first; a veto keeps the record', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001'))
    await expect(
      store.delete('cont0001', () => {
        throw new Error('veto')
      }),
    ).rejects.toThrow('veto')
    expect(store.exists('cont0001')).toBe(true)
    const seen: string[] = []
    await store.delete('cont0001', (current) => {
      seen.push(current.id)
    })
    expect(seen).toEqual(['cont0001'])
    expect(store.get('cont0001')).toBeNull()
    expect(store.list()).toEqual([])
  })

  test('an invalid id is refused before anything is read', () => {
    const store = make()
    expect(() => store.get('../x')).toThrow(expect.objectContaining({ exitCode: 2 }))
  })

  test('list holds every record; warnOnce warns once', async () => {
    const store = make()
    await store.create(sessionRecord('cont0001'))
    await store.create(sessionRecord('cont0002'))
    expect(
      store
        .list()
        .map((r) => r.id)
        .sort(),
    ).toEqual(['cont0001', 'cont0002'])
    expect(store.corruptRecords()).toEqual([])
  })
})

describe('the fake store checks status changes against the real lifecycle', () => {
  test('an update to a status no event leads to is IllegalTransitionError; a legal one is written', async () => {
    const store = new MemoryStore()
    await store.create(sessionRecord('cont0001', { status: 'KILLED' }))
    await expect(store.update('cont0001', (r) => ({ ...r, status: 'COMPLETED' }))).rejects.toMatchObject({
      code: 'ILLEGAL_TRANSITION',
    })
    expect(await store.update('cont0001', (r) => ({ ...r, status: 'RUNNING' }))).toMatchObject({ rev: 2 })
  })
})
