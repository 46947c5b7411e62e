import * as fs from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { tmpDir } from '../../../helpers/tmp.js'

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>()
  return { ...actual, readFileSync: vi.fn(actual.readFileSync) }
})

describe('FileLock and the holder identity', () => {
  it.runIf(process.platform === 'linux')(
    'reads its own process identity once, not once per lock taken',
    async () => {
      const dir = tmpDir()
      const ownStat = `/proc/${process.pid}/stat`
      const reads = () =>
        vi.mocked(fs.readFileSync).mock.calls.filter(([path]) => String(path) === ownStat).length
      // Unit files share a worker's modules (isolate: false): a module loaded by an earlier file would not see
      // the mock, and its cached identity would make this count 0 whatever the code does. Load them afresh.
      vi.resetModules()
      const { FileLock } = await import('../../../../src/sessions/record/lock.js')
      const before = reads()
      for (let i = 0; i < 20; i++) {
        const lock = await FileLock.acquire(join(dir, `${i}.lock`))
        expect(JSON.parse(fs.readFileSync(join(dir, `${i}.lock`), 'utf8')).start_time).toEqual(
          expect.any(String),
        )
        lock.release()
      }
      expect(reads() - before).toBe(1)
    },
  )
})
