import { closeFd, lstatOrNull, openRead, readBytesAt, UnsafeFileError } from '../../disk/door.js'
import { ExitCode, HarnessError, IllegalStateError } from '../../errors.js'
import { type RunBoundary, runBoundaries } from '../../history/log-stream.js'
import { logPathFor } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import { getSession } from './query.js'

class NoLogError extends HarnessError {
  constructor(id: string, path: string) {
    super(
      'NO_LOG',
      `session "${id}" has no log (${path})`,
      ExitCode.IllegalState,
      'interactive runs write to the terminal, not to a log; a removed log is not kept anywhere else',
    )
  }
}

export interface LogInfo {
  id: string
  path: string
  runs: RunBoundary[]
  /** The log is what a tmux pane showed (docs/tmux.md): a terminal recording, escapes and all. */
  terminal: boolean
}

export async function sessionLog(ctx: SessionEnv, input: string): Promise<LogInfo> {
  const session = await getSession(ctx, input)
  const paths = await ctx.project()
  const path = logPathFor(paths.logsDir, session.id)
  const stat = lstatOrNull(path)
  if (!stat) throw new NoLogError(session.id, path)
  if (stat.isSymbolicLink()) {
    throw new IllegalStateError(
      `${path} is a symlink: harness reads its logs only by their own names (docs/security.md)`,
      undefined,
      'SYMLINK_REFUSED',
    )
  }
  // A FIFO, socket or device in the log's place would block or never end: refused before it is opened.
  if (!stat.isFile()) throw new UnsafeFileError(path, 'not a plain file')
  return { id: session.id, path, runs: runBoundaries(session.runs), terminal: Boolean(session.tmux_session) }
}

/** The whole log as text (`logs --json`), read through the door. */
export function logContent(info: LogInfo): string {
  const { fd, size } = openRead(info.path)
  return readBytesAt(fd, size, 0, true).toString('utf8')
}

/** Where the log's bytes go: as written (`--raw`), or through the renderer. */
export interface LogSink {
  feed(chunk: Buffer, position: number): void
  /** New runs seen while following (a resume). */
  runs?(runs: RunBoundary[]): void
  finish?(size: number): void
}

/** Copies the log to `sink` from `offset`; returns the new offset. */
function copyFrom(path: string, offset: number, sink: LogSink): number {
  let fd: number
  try {
    // Through the door: never a symlink, FIFO or device put in the log's place (docs/security.md).
    fd = openRead(path).fd
  } catch (error) {
    if (error instanceof UnsafeFileError) throw error
    return offset
  }
  try {
    let position = offset
    for (;;) {
      const chunk = readBytesAt(fd, 64 * 1024, position)
      if (chunk.length === 0) return position
      sink.feed(chunk, position)
      position += chunk.length
    }
  } finally {
    closeFd(fd)
  }
}

/**
 * Prints the log; with `follow`, keeps printing what is appended until the session is no longer RUNNING
 * (then prints whatever came last), or until `closed` says nobody reads any more (a write failed with EPIPE
 * once `| head` exited; like `tail -f`, that is noticed on the next write).
 */
export async function streamLog(
  ctx: SessionEnv,
  info: LogInfo,
  follow: boolean,
  sink: LogSink,
  closed: () => boolean,
): Promise<void> {
  sink.runs?.(info.runs)
  let offset = copyFrom(info.path, 0, sink)
  try {
    if (!follow) return
    for (;;) {
      if (closed()) return
      const session = await getSession(ctx, info.id)
      sink.runs?.(runBoundaries(session.runs))
      offset = copyFrom(info.path, offset, sink)
      if (session.status !== 'RUNNING') return
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    sink.finish?.(offset)
  }
}

/**
 * The last `maxBytes` of the log (the dashboard's pane and pager), from where a line begins: a long log is not
 * read whole to show its end. `position` is where the bytes begin in the log.
 */
export function logTail(info: LogInfo, maxBytes: number): { bytes: Buffer; position: number } {
  const { fd, size } = openRead(info.path)
  const from = Math.max(0, size - maxBytes)
  const bytes = readBytesAt(fd, size - from, from, true)
  if (from === 0) return { bytes, position: 0 }
  // Cut into the middle of a line: start at the next one.
  const newline = bytes.indexOf(0x0a)
  return newline < 0
    ? { bytes, position: from }
    : { bytes: bytes.subarray(newline + 1), position: from + newline + 1 }
}
