import { execFileSync } from 'node:child_process'
import { closeSync, constants, openSync, readFileSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { FdWriter } from '../../../src/cli/fd-writer.js'
import { fdMayBeTerminal } from '../../../src/disk/door.js'
import { tmpDir } from '../../helpers/tmp.js'

const open: number[] = []
afterEach(() => {
  for (const fd of open.splice(0)) {
    try {
      closeSync(fd)
    } catch {}
  }
})

/** A FIFO's two ends, both non-blocking: the writer's end fills after the pipe's 64 KiB and says EAGAIN. */
function nonBlockingPipe(): { reader: number; writer: number } {
  const fifo = join(tmpDir(), 'fifo')
  execFileSync('mkfifo', [fifo])
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK)
  const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
  open.push(reader, writer)
  return { reader, writer }
}

/** Reads what the pipe holds now (nothing: an empty array). */
function drainNow(fd: number): Buffer {
  const chunks: Buffer[] = []
  const buffer = Buffer.alloc(65536)
  for (;;) {
    let n: number
    try {
      n = readSync(fd, buffer, 0, buffer.length, null)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break
      throw error
    }
    if (n === 0) break
    chunks.push(Buffer.from(buffer.subarray(0, n)))
  }
  return Buffer.concat(chunks)
}

describe('FdWriter, harness output that is not a terminal', () => {
  test('writes everything to a file, in order, and never asks to wait', () => {
    const file = join(tmpDir(), 'out.txt')
    const fd = openSync(file, 'w')
    open.push(fd)
    const out = new FdWriter(fd)
    expect(out.write('one\n')).toBe(true)
    expect(out.write(new TextEncoder().encode('two\n'))).toBe(true)
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n')
    expect(out.isTTY).toBe(false)
  })

  test('a full non-blocking pipe: write says false, keeps the rest in order, and drains when read', {
    tags: ['process'],
  }, async () => {
    const { reader, writer } = nonBlockingPipe()
    const out = new FdWriter(writer)
    const first = Buffer.alloc(200_000, 'a')
    const second = Buffer.from('and the end\n')
    expect(out.write(first)).toBe(false)
    // The caller may reuse its buffer once write returned: what waits is a copy.
    const reused = Buffer.from(second)
    expect(out.write(reused)).toBe(false)
    reused.fill('x')
    const drained = new Promise<void>((resolve) => out.once('drain', () => resolve()))
    const got: Buffer[] = []
    let done = false
    void drained.then(() => {
      done = true
    })
    while (!done) {
      got.push(drainNow(reader))
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    got.push(drainNow(reader))
    expect(Buffer.concat(got).equals(Buffer.concat([first, second]))).toBe(true)
    expect(out.write('after\n')).toBe(true)
    expect(drainNow(reader).toString()).toBe('after\n')
  })

  test('text that fills the pipe part way through a character: the rest waits as bytes, in order', {
    tags: ['process'],
  }, async () => {
    const { reader, writer } = nonBlockingPipe()
    const out = new FdWriter(writer)
    // 'é' is two bytes in UTF-8: with 65,535 single bytes first, the pipe's 64 KiB end inside one.
    const text = `${'a'.repeat(65_535)}${'é'.repeat(50_000)}`
    expect(out.write(text)).toBe(false)
    expect(out.write('end\n')).toBe(false)
    const drained = new Promise<void>((resolve) => out.once('drain', () => resolve()))
    let done = false
    void drained.then(() => {
      done = true
    })
    const got: Buffer[] = []
    while (!done) {
      got.push(drainNow(reader))
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    got.push(drainNow(reader))
    expect(Buffer.concat(got).toString('utf8')).toBe(`${text}end\n`)
  })

  test('a reader that has gone is one EPIPE error, after the write returns; later writes are dropped', {
    tags: ['process'],
  }, async () => {
    const { reader, writer } = nonBlockingPipe()
    closeSync(reader)
    open.splice(open.indexOf(reader), 1)
    const out = new FdWriter(writer)
    const errors: NodeJS.ErrnoException[] = []
    out.on('error', (error) => errors.push(error as NodeJS.ErrnoException))
    expect(out.write('lost\n')).toBe(true)
    expect(errors).toEqual([])
    await new Promise((resolve) => setImmediate(resolve))
    expect(errors.map((error) => error.code)).toEqual(['EPIPE'])
    expect(out.write('also lost\n')).toBe(true)
    await new Promise((resolve) => setImmediate(resolve))
    expect(errors).toHaveLength(1)
  })
})

describe('fdMayBeTerminal', () => {
  test('a pipe, a file and /dev/null are not; another character device may be', { tags: ['process'] }, () => {
    const { writer } = nonBlockingPipe()
    expect(fdMayBeTerminal(writer)).toBe(false)
    const file = openSync(join(tmpDir(), 'f'), 'w')
    const devNull = openSync('/dev/null', 'w')
    const devZero = openSync('/dev/zero', 'r')
    open.push(file, devNull, devZero)
    expect(fdMayBeTerminal(file)).toBe(false)
    expect(fdMayBeTerminal(devNull)).toBe(false)
    expect(fdMayBeTerminal(devZero)).toBe(true)
  })
})
