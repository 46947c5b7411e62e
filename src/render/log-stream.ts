// The log as people read it: a session log's bytes, fed in order, turned into rendered lines.
import { EventReader, type LogEntry } from '../history/events.js'
import type { RunBoundary } from '../history/log-stream.js'
import { terminalLines } from '../history/terminal-text.js'
import type { LogSink } from '../sessions/query/logs.js'
import { renderLogEntry, renderRunHeader } from './log.js'

/**
 * The most of one line held in memory (docs/security.md, "Limits at write time"): a longer line is shown as its
 * first MAX_LINE_BYTES and a note of how much more it had (`logs --raw` prints the file as written), and the
 * rest is counted, never held, whatever its length. An event of the agents' streams is far smaller.
 */
const MAX_LINE_BYTES = 1024 * 1024

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
  /** Bytes of the current line past MAX_LINE_BYTES: counted, not kept. */
  private dropped = 0
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
      if (this.partialBytes || piece.length > MAX_LINE_BYTES) {
        this.hold(piece)
        this.flushPartial()
      } else {
        this.line(piece.toString('utf8'))
      }
      from = newline + 1
    }
    if (from < bytes.length) this.hold(bytes.subarray(from))
  }

  /** Keeps the start of the current line, up to MAX_LINE_BYTES; what is past it is only counted. */
  private hold(piece: Buffer): void {
    const room = MAX_LINE_BYTES - this.partialBytes
    if (room > 0) {
      // A copy: a view would keep the whole chunk it was read into alive.
      const kept = Buffer.from(piece.subarray(0, room))
      this.partial.push(kept)
      this.partialBytes += kept.length
    }
    this.dropped += Math.max(0, piece.length - Math.max(0, room))
  }

  private flushPartial(): void {
    if (!this.partialBytes && this.partial.length === 0) return
    const text = Buffer.concat(this.partial).toString('utf8')
    const dropped = this.dropped
    this.partial = []
    this.partialBytes = 0
    this.dropped = 0
    this.line(text)
    if (dropped > 0) {
      this.emit([
        { kind: 'note', text: `… ${dropped} more bytes of this line ("session logs --raw" prints them)` },
      ])
    }
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
