import * as fs from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { replaceFileDurably, type WriteFs } from '../../src/durable.js'
import { DiskFaultError } from '../../src/errors.js'
import { SessionStore } from '../../src/sessions/record/store.js'
import { sessionRecord, testSealer } from '../fixtures/records.js'
import { tmpDir } from '../helpers/tmp.js'

/** The real file calls, except that each write takes at most `chunk` bytes, and fails once `budget` runs out. */
function shortWritingFs(chunk: number, budget = Number.POSITIVE_INFINITY, errno = 'ENOSPC') {
  let left = budget
  const calls: number[] = []
  const io: WriteFs = {
    ...fs,
    writeSync(fd, buffer, offset, length) {
      const take = Math.min(chunk, length, left)
      calls.push(take)
      if (take <= 0) throw Object.assign(new Error(`${errno}: injected`), { code: errno })
      left -= take
      return fs.writeSync(fd, buffer, offset, take)
    },
  }
  return { io, calls }
}

describe('durable writes', () => {
  it('continues short writes until every byte is written', () => {
    const dir = tmpDir()
    const target = join(dir, 'file.json')
    const data = 'x'.repeat(10_000)
    const { io, calls } = shortWritingFs(4096)
    replaceFileDurably(target, join(dir, 'file.json.tmp'), data, io)
    expect(fs.readFileSync(target, 'utf8')).toBe(data)
    expect(calls).toEqual([4096, 4096, 1808])
    expect(fs.readdirSync(dir)).toEqual(['file.json'])
  })

  it('a write the disk cannot take leaves the old file byte-identical and no temp file', () => {
    const dir = tmpDir()
    const target = join(dir, 'file.json')
    fs.writeFileSync(target, 'old content')
    for (const [errno, kind] of [
      ['ENOSPC', 'DISK_FULL'],
      ['EDQUOT', 'DISK_FULL'],
      ['EIO', 'IO_ERROR'],
      ['EROFS', 'READ_ONLY'],
    ] as const) {
      const { io } = shortWritingFs(4096, 5000, errno)
      const write = () => replaceFileDurably(target, join(dir, 'file.json.tmp'), 'n'.repeat(10_000), io)
      expect(write).toThrow(DiskFaultError)
      try {
        write()
      } catch (error) {
        expect((error as DiskFaultError).code).toBe(kind)
        expect((error as DiskFaultError).exitCode).toBe(1)
        // What failed underneath stays the error's standard cause.
        expect(((error as Error).cause as NodeJS.ErrnoException).code).toBe(errno)
      }
      expect(fs.readFileSync(target, 'utf8')).toBe('old content')
      expect(fs.readdirSync(dir)).toEqual(['file.json'])
    }
  })

  it('a store update on a short-writing disk writes the whole record; a full one keeps the old record', async () => {
    const dir = join(tmpDir(), 'sessions')
    const plain = new SessionStore(dir, { sealer: testSealer() })
    await plain.create(sessionRecord('shrt0001'))
    const { io, calls } = shortWritingFs(512)
    const store = new SessionStore(dir, { sealer: testSealer(), fs: io })
    const updated = await store.update('shrt0001', (r) => ({ ...r, prompt: 'p'.repeat(3000) }))
    expect(calls.length).toBeGreaterThan(3)
    expect(plain.get('shrt0001')).toEqual(updated)

    const before = fs.readFileSync(join(dir, 'shrt0001.json'))
    const full = new SessionStore(dir, { sealer: testSealer(), fs: shortWritingFs(512, 1024).io })
    await expect(full.update('shrt0001', (r) => ({ ...r, prompt: 'q'.repeat(3000) }))).rejects.toMatchObject({
      code: 'DISK_FULL',
      exitCode: 1,
    })
    expect(fs.readFileSync(join(dir, 'shrt0001.json'))).toEqual(before)
    expect(fs.readdirSync(dir)).toEqual(['shrt0001.json'])
  })
})
