import { writeSync } from 'node:fs'
import type { Readable } from 'node:stream'

interface PipedChild {
  once(event: 'exit', listener: () => void): unknown
  stdout?: Readable | null
  stderr?: Readable | null
}

const QUIET_MS = 100
const MAX_DRAIN_MS = 2000

/**
 * A process it left behind (`sleep 60 &`) inherits the child's output pipes and holds them open after the child
 * exits, and waiting for end-of-file would wait for it. So once the child has exited: read what it wrote (it is
 * already in the pipe), then let go after `QUIET_MS` without data (at most `MAX_DRAIN_MS`). The leftover then
 * writes into a closed pipe; the child's own result is final. While `held()` (the reader downstream is slow and
 * the pipes are paused for it), silence is the reader's, not the writer's: nothing is let go.
 */
export function releasePipesAfterExit(child: PipedChild, held: () => boolean = () => false): void {
  child.once('exit', () => {
    const streams = [child.stdout, child.stderr].filter(
      (stream): stream is Readable => !!stream && !stream.destroyed && !stream.readableEnded,
    )
    if (streams.length === 0) return
    let quiet: NodeJS.Timeout | undefined
    let limit: NodeJS.Timeout | undefined
    const release = () => {
      if (held()) {
        // Not yet: what is still in the pipe is the agent's output, on its way at the reader's pace.
        wait()
        armLimit()
        return
      }
      clearTimeout(quiet)
      clearTimeout(limit)
      for (const stream of streams) {
        stream.off('data', wait)
        stream.destroy()
      }
    }
    const wait = () => {
      clearTimeout(quiet)
      quiet = setTimeout(release, QUIET_MS)
      quiet.unref()
    }
    const armLimit = () => {
      clearTimeout(limit)
      limit = setTimeout(release, MAX_DRAIN_MS)
      limit.unref()
    }
    armLimit()
    for (const stream of streams) {
      stream.on('data', wait)
      // Ended on its own: nothing to release, and no timer may keep harness waiting.
      stream.once('close', () => {
        if (streams.every((s) => s.destroyed || s.readableEnded)) {
          clearTimeout(quiet)
          clearTimeout(limit)
        }
      })
    }
    wait()
  })
}

/** Why the log stopped being written: from then on it is incomplete. */
export interface LogWriteFailure {
  code: string
  message: string
  /** Bytes of this run's output that did reach the log. */
  written: number
}

export interface OutputPipe {
  /** The first failure to write the log, if there was one (nothing more was written to it after that). */
  logFailure(): LogWriteFailure | undefined
}

/**
 * Headless: every chunk of the child's stdout and stderr goes to the log first (it must survive us), then to
 * `tee` (the terminal, or whoever reads harness's output). With backpressure: when `tee` cannot take more,
 * the child's pipes are paused until it drains, so the agent waits for a slow reader instead of harness
 * buffering its output (docs/security.md, "Faults"). A log that cannot be written (a full disk) is
 * given up, the failure kept for the record; the output still reaches `tee`.
 */
/** Where an agent's output goes besides its log: harness's stdout or stderr, as a stream or a descriptor writer. */
export interface OutputSink {
  /** False when the sink holds bytes it could not pass on yet: 'drain' follows once it has. */
  write(chunk: Uint8Array): boolean
  once(event: 'drain' | 'error' | 'close', listener: () => void): unknown
  off(event: 'drain', listener: () => void): unknown
}

export function pipeAgentOutput(child: PipedChild, sinks: { logFd?: number; tee?: OutputSink }): OutputPipe {
  const sources = [child.stdout, child.stderr].filter((s): s is Readable => !!s)
  let logFailure: LogWriteFailure | undefined
  let logged = 0
  let tee = sinks.tee
  let held = false

  const resume = () => {
    if (!held) return
    held = false
    for (const source of sources) source.resume()
  }
  const dropTee = () => {
    // The reader is gone (EPIPE, a closed terminal): the log still gets everything.
    tee?.off('drain', resume)
    tee = undefined
    resume()
  }
  tee?.once('error', dropTee)
  tee?.once('close', dropTee)

  const writeLog = (chunk: Buffer) => {
    if (sinks.logFd === undefined || logFailure) return
    let offset = 0
    try {
      while (offset < chunk.length) offset += writeSync(sinks.logFd, chunk, offset, chunk.length - offset)
      logged += chunk.length
    } catch (error) {
      const failure = error as NodeJS.ErrnoException
      logFailure = { code: failure.code ?? 'EIO', message: failure.message, written: logged + offset }
    }
  }
  const onData = (chunk: Buffer) => {
    writeLog(chunk)
    if (!tee) return
    let room: boolean
    try {
      room = tee.write(chunk)
    } catch {
      dropTee()
      return
    }
    if (!room && !held) {
      held = true
      for (const source of sources) source.pause()
      tee.once('drain', resume)
    }
  }
  for (const source of sources) source.on('data', onData)
  releasePipesAfterExit(child, () => held)
  return { logFailure: () => logFailure }
}
