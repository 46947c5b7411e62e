import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { LockTimeoutError } from '../../src/errors.js'
import { SessionStore } from '../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../fixtures/records.js'
import { bundleStoreWorker, raceWorkers, Worker } from '../fixtures/workers.js'
import { tmpDir } from '../helpers/tmp.js'

let bundle: string

beforeAll(async () => {
  bundle = await bundleStoreWorker(tmpDir())
})

describe('concurrent read-modify-write', () => {
  it('8 processes × 100 increments through update lose nothing', async () => {
    const dir = join(tmpDir(), 'sessions')
    const store = new SessionStore(dir, { sealer: testSealer() })
    await store.create(sessionRecord('count001', { counter: 0 }))
    const workers = await raceWorkers(bundle, 8, () => ['increment', dir, 'count001', '100'])
    await Promise.all(workers.map((w) => w.succeeded()))
    const record = store.get('count001')
    expect(record?.counter).toBe(800)
    // create writes rev 1; each of the 800 updates adds one.
    expect(record?.rev).toBe(801)
    expect(readdirSync(dir)).toEqual(['count001.json'])
  })

  it('a lock holder SIGKILLed mid-update does not block the next update', async () => {
    const dir = join(tmpDir(), 'sessions')
    const store = new SessionStore(dir, { sealer: testSealer() })
    await store.create(sessionRecord('held0001', { counter: 0 }))
    const holder = new Worker(bundle, ['hold-update', dir, 'held0001'])
    await holder.waitForLine('locked')

    // While it lives, its lock holds: a short wait ends in a clear error, and the record is untouched.
    const busy = new SessionStore(dir, { sealer: testSealer(), lock: { timeoutMs: 200 } })
    await expect(busy.update('held0001', (r) => ({ ...r, counter: 1 }))).rejects.toBeInstanceOf(
      LockTimeoutError,
    )
    expect(existsSync(join(dir, 'held0001.lock'))).toBe(true)

    await holder.kill()
    // The lock has no time-based staleness: succeeding at all proves the dead holder was recognised and broken.
    const next = await store.update('held0001', (r) => ({ ...r, counter: Number(r.counter) + 1 }))
    expect(next).toMatchObject({ counter: 1, rev: 2 })
    expect(readdirSync(dir)).toEqual(['held0001.json'])
  })

  it('another process gets the lock promptly after the holder is SIGKILLed', async () => {
    const dir = join(tmpDir(), 'sessions')
    const store = new SessionStore(dir, { sealer: testSealer() })
    await store.create(sessionRecord('held0002', { counter: 0 }))
    const holder = new Worker(bundle, ['hold-update', dir, 'held0002'])
    await holder.waitForLine('locked')
    // The waiter is already retrying when the holder dies.
    const [waiter] = await raceWorkers(bundle, 1, () => ['increment', dir, 'held0002', '1'])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(waiter?.lines()).toEqual(['ready'])
    await holder.kill()
    // Succeeding proves the break: a lock is never broken by age, only when its holder is verifiably dead.
    await waiter?.succeeded()
    expect(store.get('held0002')).toMatchObject({ counter: 1, rev: 2 })
  })
})
