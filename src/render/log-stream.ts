// The log as people read it: a session log's bytes, fed in order, turned into rendered lines.
import { EventReader, type LogEntry } from '../history/events.js'
import type { RunBoundary } from '../history/log-stream.js'
import { terminalLines } from '../history/terminal-text.js'
import type { LogSink } from '../sessions/query/logs.js'
import { renderLogEntry, renderRunHeader } from './log.js'

/** A line longer than this without a newline is shown as it is, in pieces, rather than held in memory. */
const MAX_LINE_BYTES = 16 * 1024 * 1024

/**
 * Turns a log's bytes, fed in order (as `logs` and `logs -f` read them), into readable text: each run's events
 * through its own `EventReader`, a header line where each run begins. Output is written as complete lines.
 */
export class LogRenderer {
  private boundaries: RunBoundary[] = []
  private next = 0
  private reader = new EventReader()
  private partial: Buffer[] = []
  private partialBytes = 0
  private lastLine: string | undefined
  /** The last line a terminal recording drew: a redraw of the same line is not printed again. */
  private lastDrawn: string | undefined

  constructor(
    private readonly write: (text: string) => void,
    private readonly color = false,
    /** Only what is rendered (entries), for callers that keep them rather than print them. */
    private readonly onEntry?: (entry: LogEntry) => void,
    /** The log is a terminal recording (a tmux session's): its escapes are taken out (history/terminal-text). */
    private readonly terminal = false,
  ) {}

  /** The runs that have a known start in the log; later calls add runs begun since (a resume under -f). */
  setRuns(runs: readonly RunBoundary[]): void {
    const printed = this.boundaries.slice(0, this.next)
    const fresh = [...runs]
      .filter((run) => !printed.some((p) => p.n === run.n))
      .sort((a, b) => a.log_offset - b.log_offset || a.n - b.n)
    this.boundaries = [...printed, ...fresh]
  }

  /** Bytes of the log starting at `position` (positions are contiguous across calls). */
  feed(chunk: Buffer, position: number): void {
    let start = 0
    while (start < chunk.length) {
      this.headersUpTo(position + start)
      const boundary = this.boundaries[this.next]?.log_offset ?? Number.POSITIVE_INFINITY
      const end = Math.min(chunk.length, boundary - position)
      this.lines(chunk.subarray(start, end))
      start = end
    }
  }

  /** The log ended at `size` (or the follow stopped): prints what was held back. */
  finish(size: number): void {
    this.flushPartial()
    this.headersUpTo(size)
    this.emit(this.reader.end())
  }

  private headersUpTo(position: number): void {
    while (
      this.next < this.boundaries.length &&
      (this.boundaries[this.next] as RunBoundary).log_offset <= position
    ) {
      this.flushPartial()
      this.emit(this.reader.end())
      // A resumed codex thread reports its totals again: the next run's reader subtracts what this one saw.
      this.reader = new EventReader({ earlier: this.reader.codexThread })
      // A blank line before every header but the first, so runs stand apart.
      if (this.lastLine !== undefined && this.lastLine !== '') this.out('')
      this.out(renderRunHeader(this.boundaries[this.next] as RunBoundary, this.color))
      this.next++
    }
  }

  private lines(bytes: Buffer): void {
    let from = 0
    for (;;) {
      const newline = bytes.indexOf(0x0a, from)
      if (newline < 0) break
      const piece = bytes.subarray(from, newline)
      if (this.partialBytes) {
        this.partial.push(piece)
        this.flushPartial()
      } else {
        this.line(piece.toString('utf8'))
      }
      from = newline + 1
    }
    if (from < bytes.length) {
      const rest = Buffer.from(bytes.subarray(from))
      this.partial.push(rest)
      this.partialBytes += rest.length
      if (this.partialBytes > MAX_LINE_BYTES) this.flushPartial()
    }
  }

  private flushPartial(): void {
    if (!this.partialBytes && this.partial.length === 0) return
    const text = Buffer.concat(this.partial).toString('utf8')
    this.partial = []
    this.partialBytes = 0
    this.line(text)
  }

  private line(text: string): void {
    const line = text.endsWith('\r') ? text.slice(0, -1) : text
    if (!this.terminal) {
      this.emit(this.reader.push(line))
      return
    }
    for (const drawn of terminalLines(line)) {
      if (drawn !== '' && drawn === this.lastDrawn) continue
      this.lastDrawn = drawn
      this.emit(this.reader.push(drawn))
    }
  }

  private emit(entries: LogEntry[]): void {
    for (const entry of entries) {
      this.onEntry?.(entry)
      for (const line of renderLogEntry(entry, this.color)) this.out(line)
    }
  }

  private out(line: string): void {
    this.lastLine = line
    this.write(`${line}\n`)
  }
}

/** A `LogRenderer` as the sink `streamLog` feeds; `terminal`: the log is a tmux session's recording. */
export function logSink(write: (text: string) => void, color = false, terminal = false): LogSink {
  const renderer = new LogRenderer(write, color, undefined, terminal)
  return {
    feed: (chunk, position) => renderer.feed(chunk, position),
    runs: (runs) => renderer.setRuns(runs),
    finish: (size) => renderer.finish(size),
  }
}
