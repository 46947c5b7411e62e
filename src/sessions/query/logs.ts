import { closeFd, lstatOrNull, openRead, readBytesAt, UnsafeFileError } from '../../disk/door.js'
import { ExitCode, HarnessError, IllegalStateError } from '../../errors.js'
import { type RunBoundary, runBoundaries } from '../../history/log-stream.js'
import { logPathFor } from '../../project.js'
import { readerOf } from '../backends/index.js'
import type { SessionEnv } from '../ports.js'
import { lastRun } from '../record/liveness.js'
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
  /** The first of its files that exists (what `logs --json` names). */
  path: string
  /**
   * Its files in order, as its backend says (docs/backends.md): the session's log, and while a remote run is
   * not settled yet its output where the job writes it (the spool); the last one grows while the run lasts.
   */
  files: string[]
  runs: RunBoundary[]
  /** The log is what a tmux pane showed (docs/tmux.md): a terminal recording, escapes and all. */
  terminal: boolean
  /** How often a follower asks whether the session still runs. */
  pollMs: number
}

/** Where a session's output is, refused when a file in its place is a link or not a plain file. */
export async function sessionLog(ctx: SessionEnv, input: string): Promise<LogInfo> {
  const session = await getSession(ctx, input)
  const paths = await ctx.project()
  const source = (await readerOf(session)).logs(session, paths.logsDir)
  const files: string[] = []
  for (const path of source.files) {
    const stat = lstatOrNull(path)
    if (!stat) continue
    if (stat.isSymbolicLink()) {
      throw new IllegalStateError(
        `${path} is a symlink: harness reads its logs only by their own names (docs/security.md)`,
        undefined,
        'SYMLINK_REFUSED',
      )
    }
    // A FIFO, socket or device in the log's place would block or never end: refused before it is opened.
    if (!stat.isFile()) throw new UnsafeFileError(path, 'not a plain file')
    files.push(path)
  }
  const first = files[0]
  if (!first) throw new NoLogError(session.id, source.files[0] ?? logPathFor(paths.logsDir, session.id))
  const runs = runBoundaries(session.runs)
  const live = source.files.length > 1 ? lastRun(session) : undefined
  // A run whose output is still where its job writes it begins where the session's log ends.
  if (live && files.length > 1 && !runs.some((run) => run.n === live.n)) {
    const base = files.slice(0, -1).reduce((sum, file) => sum + (lstatOrNull(file)?.size ?? 0), 0)
    runs.push({ n: live.n, kind: live.kind, started_at: live.started_at, log_offset: base })
  }
  return {
    id: session.id,
    path: first,
    files,
    runs,
    terminal: Boolean(session.tmux_session),
    pollMs: source.pollMs,
  }
}

/** The whole log as text (`logs --json`), read through the door. */
export function logContent(info: LogInfo): string {
  return info.files
    .map((file) => {
      const { fd, size } = openRead(file)
      return readBytesAt(fd, size, 0, true).toString('utf8')
    })
    .join('')
}

/** Where the log's bytes go: as written (`--raw`), or through the renderer. */
export interface LogSink {
  feed(chunk: Buffer, position: number): void
  /** New runs seen while following (a resume). */
  runs?(runs: RunBoundary[]): void
  finish?(size: number): void
}

/** Copies `path` to `sink` from `offset` (positions counted from `base`); returns the new offset. */
function copyFrom(path: string, offset: number, sink: LogSink, base = 0): number {
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
      sink.feed(chunk, base + position)
      position += chunk.length
    }
  } finally {
    closeFd(fd)
  }
}

/**
 * Prints the log; with `follow`, keeps printing what is appended to its last file until the session is no
 * longer RUNNING (then prints whatever came last), or until `closed` says nobody reads any more (a write failed
 * with EPIPE once `| head` exited; like `tail -f`, that is noticed on the next write). Reading only: a run that
 * ended with nobody to record it ends the follow with its output, and is settled by an acting command.
 */
export async function streamLog(
  ctx: SessionEnv,
  info: LogInfo,
  follow: boolean,
  sink: LogSink,
  closed: () => boolean,
): Promise<void> {
  sink.runs?.(info.runs)
  let base = 0
  for (const file of info.files.slice(0, -1)) base += copyFrom(file, 0, sink, base)
  const followed = info.files[info.files.length - 1] ?? info.path
  let offset = copyFrom(followed, 0, sink, base)
  try {
    if (!follow) return
    for (let asked = 0; ; ) {
      if (closed()) return
      offset = copyFrom(followed, offset, sink, base)
      if (Date.now() - asked >= info.pollMs) {
        asked = Date.now()
        const session = await getSession(ctx, info.id)
        sink.runs?.(runBoundaries(session.runs))
        if (session.status !== 'RUNNING') {
          offset = copyFrom(followed, offset, sink, base)
          return
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    sink.finish?.(base + offset)
  }
}

/**
 * The last `maxBytes` of the log (the dashboard's pane and pager), from where a line begins: a long log is not
 * read whole to show its end. `position` is where the bytes begin in the log.
 */
export function logTail(info: LogInfo, maxBytes: number): { bytes: Buffer; position: number } {
  const { fd, size } = openRead(info.files[info.files.length - 1] ?? info.path)
  const from = Math.max(0, size - maxBytes)
  const bytes = readBytesAt(fd, size - from, from, true)
  if (from === 0) return { bytes, position: 0 }
  // Cut into the middle of a line: start at the next one.
  const newline = bytes.indexOf(0x0a)
  return newline < 0
    ? { bytes, position: from }
    : { bytes: bytes.subarray(newline + 1), position: from + newline + 1 }
}
