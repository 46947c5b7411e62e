import {
  existsSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { LockTimeoutError } from '../../../../src/errors.js'
import { identify } from '../../../../src/process/identity.js'
import { FileLock, withLock } from '../../../../src/sessions/record/lock.js'
import { raceWorkers, storeWorkerBundle, Worker } from '../../../fixtures/workers.js'
import { tmpDir } from '../../../helpers/tmp.js'

// Made by the first test that starts a worker: those are tagged `process`, and the fast lane runs the rest.
const bundle = storeWorkerBundle(tmpDir)

function readLock(path: string): { pid: number; start_time: string | null } {
  return JSON.parse(readFileSync(path, 'utf8'))
}

/** A lock file left by a holder that was SIGKILLed while holding it. */
async function deadHolderLock(path: string): Promise<number> {
  const holder = new Worker(await bundle(), ['hold-lock', path])
  await holder.waitForLine('locked')
  await holder.kill()
  expect(readLock(path).pid).toBe(holder.pid)
  return holder.pid
}

describe('FileLock', () => {
  it('is taken and released; the lock file names its holder', async () => {
    const path = join(tmpDir(), 'a.lock')
    const lock = await FileLock.acquire(path)
    const content = readLock(path)
    expect(content.pid).toBe(process.pid)
    expect(content.start_time).toBe(identify(process.pid)?.start_time)
    lock.release()
    expect(existsSync(path)).toBe(false)
    lock.release() // twice is harmless
    const again = await FileLock.acquire(path, { timeoutMs: 0 })
    again.release()
    expect(existsSync(path)).toBe(false)
  })

  it('withLock releases on success and on error', async () => {
    const path = join(tmpDir(), 'b.lock')
    expect(await withLock(path, {}, () => (existsSync(path) ? 'held' : 'not held'))).toBe('held')
    expect(existsSync(path)).toBe(false)
    await expect(
      withLock(path, {}, () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(existsSync(path)).toBe(false)
  })

  it('retries a busy lock, then gives a clear LockTimeoutError', async () => {
    const path = join(tmpDir(), 'c.lock')
    const held = await FileLock.acquire(path)
    try {
      expect(FileLock.tryAcquire(path)).toBeNull()
      const started = Date.now()
      const error = await FileLock.acquire(path, { timeoutMs: 150, what: 'session "abcd1234"' }).catch(
        (e) => e,
      )
      expect(error).toBeInstanceOf(LockTimeoutError)
      expect(Date.now() - started).toBeGreaterThanOrEqual(150)
      expect(error.message).toContain('session "abcd1234"')
      expect(error.message).toContain(`process ${process.pid}`)
    } finally {
      held.release()
    }
    // Free again: the waiter's failure left nothing behind.
    ;(await FileLock.acquire(path, { timeoutMs: 0 })).release()
  })

  it('a waiter gets the lock as soon as the holder releases it', async () => {
    const path = join(tmpDir(), 'd.lock')
    const held = await FileLock.acquire(path)
    setTimeout(() => held.release(), 50)
    const lock = await FileLock.acquire(path, { timeoutMs: 5000 })
    expect(readLock(path).pid).toBe(process.pid)
    lock.release()
  })

  it('breaks at once a lock whose holder was SIGKILLed', { tags: ['process'] }, async () => {
    const path = join(tmpDir(), 'e.lock')
    await deadHolderLock(path)
    // The first attempt succeeds: no waiting for the dead holder, whatever the lock file's age.
    const lock = FileLock.tryAcquire(path)
    expect(lock).not.toBeNull()
    expect(readLock(path).pid).toBe(process.pid)
    lock?.release()
  })

  it('breaks a lock whose pid is alive but belongs to another process (pid reuse)', {
    tags: ['process'],
  }, async () => {
    const path = join(tmpDir(), 'f.lock')
    const other = new Worker(await bundle(), ['hold-lock', join(tmpDir(), 'other.lock')])
    try {
      await other.waitForLine('locked')
      const real = identify(other.pid)
      expect(real?.start_time).toBeTruthy()
      // Same pid, same host, but a different start time: the process that took the lock is gone.
      const content = { ...real, start_time: String(Number(real?.start_time) - 1), acquired_at: new Date() }
      writeFileSync(path, JSON.stringify(content))
      const lock = FileLock.tryAcquire(path)
      expect(lock).not.toBeNull()
      lock?.release()
    } finally {
      await other.kill()
    }
  })

  it('never breaks the lock of a live holder', { tags: ['process'] }, async () => {
    const path = join(tmpDir(), 'g.lock')
    const holder = new Worker(await bundle(), ['hold-lock', path])
    try {
      await holder.waitForLine('locked')
      const before = statSync(path).ino
      // However old the lock file looks: a verified live holder keeps it.
      utimesSync(path, new Date(0), new Date(0))
      expect(FileLock.tryAcquire(path)).toBeNull()
      await expect(FileLock.acquire(path, { timeoutMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError)
      expect(statSync(path).ino).toBe(before)
      expect(readLock(path).pid).toBe(holder.pid)
    } finally {
      await holder.kill()
    }
  })

  it('keeps a lock it cannot verify until it is old, then breaks it', async () => {
    const path = join(tmpDir(), 'h.lock')
    // Recorded on another host: the pid means nothing here.
    const foreign = { pid: 1, start_time: '1', hostname: `not-${hostname()}`, acquired_at: new Date() }
    writeFileSync(path, JSON.stringify(foreign))
    expect(FileLock.tryAcquire(path, { unverifiableStaleMs: 60_000 })).toBeNull()
    const old = new Date(Date.now() - 120_000)
    utimesSync(path, old, old)
    const lock = FileLock.tryAcquire(path, { unverifiableStaleMs: 60_000 })
    expect(lock).not.toBeNull()
    lock?.release()
  })

  it('gives an unreadable lock file a moment before breaking it', async () => {
    const path = join(tmpDir(), 'i.lock')
    writeFileSync(path, '')
    expect(FileLock.tryAcquire(path)).toBeNull()
    const old = new Date(Date.now() - 10_000)
    utimesSync(path, old, old)
    const lock = FileLock.tryAcquire(path)
    expect(lock).not.toBeNull()
    lock?.release()
  })

  it('release does not remove a lock that someone else took after breaking ours', {
    tags: ['process'],
  }, async () => {
    const path = join(tmpDir(), 'j.lock')
    const ours = await FileLock.acquire(path)
    // We are judged dead: our lock file is replaced by another holder's.
    await deadHolderLock(`${path}.elsewhere`)
    const theirs = readFileSync(`${path}.elsewhere`, 'utf8')
    unlinkSync(path)
    // The new file may well get our freed inode number (ext4 reuses them at once): release compares content.
    writeFileSync(path, theirs)
    ours.release()
    expect(readFileSync(path, 'utf8')).toBe(theirs)
  })

  // Each worker takes the lock over and over; every time it leaves it as a dead holder would, so every
  // acquisition has to break a stale lock while the others race to break the same one. An exclusive marker
  // file taken inside the lock catches two holders at once.
  it.each([2, 5])(
    '%i waiters racing to break the same stale lock never both hold it',
    { tags: ['process'] },
    async (count) => {
      const dir = tmpDir()
      const path = join(dir, 'race.lock')
      await deadHolderLock(path)
      const stale = join(dir, 'stale-content.json')
      writeFileSync(stale, readFileSync(path))
      const iterations = count === 2 ? 300 : 150
      const workers = await raceWorkers(await bundle(), count, () => [
        'race-stale-lock',
        path,
        join(dir, 'inside'),
        stale,
        String(iterations),
      ])
      await Promise.all(workers.map((w) => w.succeeded()))
      for (const w of workers) expect(w.lines()).toEqual(['ready', 'done'])
      // Breakers clean up after themselves: no guard or temp file is left.
      expect(readdirSync(dir).sort()).toEqual(['race.lock', 'stale-content.json'])
    },
  )
})
