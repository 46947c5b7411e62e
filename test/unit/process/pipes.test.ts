import { EventEmitter } from 'node:events'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough, Writable } from 'node:stream'
import { describe, expect, test, vi } from 'vitest'
import { pipeAgentOutput } from '../../../src/process/pipes.js'
import { tmpDir } from '../../helpers/tmp.js'

/** A child whose stdout and stderr the test writes, as an agent would. */
function fakeChild() {
  const child = Object.assign(new EventEmitter(), { stdout: new PassThrough(), stderr: new PassThrough() })
  return child
}

/** A reader downstream that takes nothing until `drainAll` is called. */
function stalledReader() {
  const got: Buffer[] = []
  const pending: (() => void)[] = []
  const tee = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      got.push(chunk)
      pending.push(callback)
    },
  })
  return {
    tee,
    got,
    drainAll() {
      for (let callback = pending.shift(); callback; callback = pending.shift()) callback()
    },
  }
}

describe("agent output to the log and harness's own output", () => {
  test('a full reader pauses the agent pipes until it drains; the log gets each chunk first', async () => {
    const child = fakeChild()
    const reader = stalledReader()
    const logPath = join(tmpDir(), 'agent.log')
    const logFd = openSync(logPath, 'a')
    try {
      pipeAgentOutput(child, { logFd, tee: reader.tee })
      child.stdout.write(Buffer.alloc(4096, 'a'))
      await vi.waitFor(() => expect(child.stdout.isPaused()).toBe(true))
      expect(child.stderr.isPaused()).toBe(true)
      expect(readFileSync(logPath).length).toBe(4096)
      // While paused, what the agent writes stays in its pipe (here: the PassThrough), not in harness.
      child.stderr.write(Buffer.alloc(2048, 'b'))
      expect(reader.got.reduce((n, c) => n + c.length, 0)).toBe(4096)
      reader.drainAll()
      await vi.waitFor(() => expect(reader.got.reduce((n, c) => n + c.length, 0)).toBe(6144))
      expect(readFileSync(logPath, 'utf8')).toBe(`${'a'.repeat(4096)}${'b'.repeat(2048)}`)
    } finally {
      closeSync(logFd)
    }
  })

  test('a log that cannot be written is given up and said; the output still reaches the reader', async () => {
    const child = fakeChild()
    const got: string[] = []
    const tee = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        got.push(chunk.toString())
        callback()
      },
    })
    const path = join(tmpDir(), 'agent.log')
    closeSync(openSync(path, 'w'))
    // Opened for reading only: every write fails (EBADF), as a full disk's would (ENOSPC).
    const logFd = openSync(path, 'r')
    const pipe = pipeAgentOutput(child, { logFd, tee })
    child.stdout.write('first\n')
    child.stdout.write('second\n')
    await vi.waitFor(() => expect(got.join('')).toBe('first\nsecond\n'))
    expect(pipe.logFailure()).toMatchObject({ code: 'EBADF', written: 0 })
    closeSync(logFd)
  })
})
