import { EventEmitter } from 'node:events'
import { writeTextToFd, writeToFd } from '../disk/door.js'

/** What harness writes its own output to: a stream of the process, an FdWriter, or a test's capture. */
export interface OutStream {
  write(chunk: string | Uint8Array): boolean
  on(event: string, listener: (...args: unknown[]) => void): unknown
  once(event: string, listener: (...args: unknown[]) => void): unknown
  off(event: string, listener: (...args: unknown[]) => void): unknown
  readonly isTTY?: boolean
  readonly columns?: number
}

/** How long to wait before trying a full non-blocking descriptor again. */
const RETRY_MS = 2

/**
 * harness's own stdout or stderr when it is a pipe, a file or /dev/null: written with write(2), as node itself
 * writes to pipes and files on Linux (synchronously), without node's stream stack, which costs the native
 * executable about 20 ms to load (docs/development/native.md, "Start-up"). A terminal keeps the process's
 * stream.
 *
 * It keeps a stream's contract as Output and the agent's output pipe use it: `write` returns false while bytes
 * wait (a non-blocking descriptor that is full: EAGAIN), then 'drain' comes once they are written; a reader
 * that has gone (EPIPE) is an 'error', after which writes are dropped.
 */
export class FdWriter extends EventEmitter implements OutStream {
  readonly isTTY = false
  readonly columns = undefined
  private waiting: Buffer[] = []
  private failed = false

  constructor(readonly fd: number) {
    super()
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.failed) return true
    // Text is written as it is when it goes whole (a listing's 64 KB pieces: making each a buffer first cost
    // the native executable more than writing it); a buffer is made only of what a full descriptor left.
    const sent = typeof chunk === 'string' && this.waiting.length === 0 ? this.writeTextNow(chunk) : 0
    if (typeof chunk === 'string' && (sent === -1 || this.failed)) return true
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk).subarray(sent)
        : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.waiting.length > 0) {
      this.waiting.push(Buffer.from(bytes)) // a copy: the caller may reuse its buffer
      return false
    }
    const written = this.writeNow(bytes)
    if (written === bytes.length || this.failed) return true
    this.waiting.push(Buffer.from(bytes.subarray(written)))
    setTimeout(() => this.retry(), RETRY_MS)
    return false
  }

  /** Writes `text` in one call if it can: -1 when all of it went, else how many bytes did (0 on EAGAIN). */
  private writeTextNow(text: string): number {
    try {
      const written = writeTextToFd(this.fd, text)
      return written === Buffer.byteLength(text) ? -1 : written
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return 0
      this.fail(error as Error)
      return 0
    }
  }

  /** Writes what it can now: all of it, or up to a full non-blocking descriptor (EAGAIN). */
  private writeNow(bytes: Buffer): number {
    let done = 0
    while (done < bytes.length) {
      try {
        done += writeToFd(this.fd, bytes, done)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return done
        this.fail(error as Error)
        return done
      }
    }
    return done
  }

  private retry(): void {
    while (this.waiting.length > 0 && !this.failed) {
      const head = this.waiting[0] as Buffer
      const written = this.writeNow(head)
      if (written < head.length) {
        if (this.failed) break
        this.waiting[0] = head.subarray(written)
        setTimeout(() => this.retry(), RETRY_MS)
        return
      }
      this.waiting.shift()
    }
    this.waiting = []
    this.emit('drain')
  }

  private fail(error: Error): void {
    this.failed = true
    this.waiting = []
    // Later, as a stream reports it: the writer's caller finishes its call first.
    process.nextTick(() => {
      if (this.listenerCount('error') > 0) this.emit('error', error)
    })
  }
}
