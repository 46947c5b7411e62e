import { ExitRequest, HarnessError } from '../errors.js'
import { terminalSafe, terminalSafeLine } from '../render/safe.js'
import { type ProgressReporter, silentProgress } from '../sessions/removal/progress.js'
import type { OutStream } from './fd-writer.js'

/** Items of a --json listing printed at a time (20 records are about 64 KB). */
const LIST_BATCH = 20

/** Global options every command sees (docs/commands.md, "harness"). */
export interface GlobalOptions {
  dir?: string
  json: boolean
  color: boolean
  quiet: boolean
}

/**
 * The only writer of stdout/stderr for commands. Under --json stdout receives exactly one document.
 * EPIPE/EIO on our own output are ignored: the reader or the terminal may be gone.
 */
export class Output {
  private stdoutGone = false

  constructor(
    readonly options: GlobalOptions,
    readonly stdout: OutStream,
    readonly stderr: OutStream,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    stdout.on('error', (error) => {
      ignoreBrokenPipe(error as NodeJS.ErrnoException)
      this.stdoutGone = true
    })
    stderr.on('error', (error) => ignoreBrokenPipe(error as NodeJS.ErrnoException))
  }

  /** True once a write to stdout failed with EPIPE/EIO: nobody reads it any more (`| head` exited). */
  get closed(): boolean {
    return this.stdoutGone
  }

  get json(): boolean {
    return this.options.json
  }

  /** Columns available for tables: the terminal's, or COLUMNS; undefined means do not truncate. */
  get width(): number | undefined {
    const fromEnv = Number(this.env.COLUMNS)
    if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv
    return this.stdout.isTTY ? this.stdout.columns : undefined
  }

  get color(): boolean {
    return this.options.color && !!this.stdout.isTTY && !('NO_COLOR' in this.env && this.env.NO_COLOR !== '')
  }

  /**
   * Prints a command's result: JSON as is under --json, else the rendered text with control characters made
   * visible (docs/security.md). A renderer that colours its output escapes its values itself (`escaped`).
   */
  result<T>(data: T, render: (data: T) => string, options: { escaped?: boolean } = {}): void {
    if (this.options.json) this.writeOut(`${JSON.stringify(data, null, 2)}\n`)
    else {
      const rendered = render(data)
      const text = options.escaped ? rendered : terminalSafe(rendered)
      if (text) this.writeOut(text.endsWith('\n') ? text : `${text}\n`)
    }
  }

  /**
   * Prints a list result. Under --json the array goes out as the items come, in chunks, never as one string
   * the size of the whole listing (the same bytes `result` would print); text output renders them all at once.
   */
  async resultList<T>(
    items: AsyncIterable<T>,
    render: (data: T[]) => string,
    options: { escaped?: boolean } = {},
  ): Promise<void> {
    if (!this.options.json) {
      const all: T[] = []
      for await (const item of items) all.push(item)
      this.result(all, render, options)
      return
    }
    // A batch pretty-printed as an array, without its brackets, is those items as they appear inside the
    // pretty-printed whole, with their indent: one JSON.stringify per batch, not per item.
    let batch: T[] = []
    let first = true
    const text = () => {
      const items = `${first ? '[\n' : ',\n'}${JSON.stringify(batch, null, 2).slice(2, -2)}`
      first = false
      batch = []
      return items
    }
    for await (const item of items) {
      if (batch.push(item) < LIST_BATCH) continue
      if (this.stdoutGone) return
      await this.writeWithBackpressure(text())
    }
    const rest = batch.length > 0 ? text() : ''
    this.writeOut(`${rest}${first ? '[]' : '\n]'}\n`)
  }

  /**
   * Writes and, when the stream's buffer is full (a pipe whose reader is slower than us), waits until it has
   * drained: without this a big listing piped to a slow reader would sit in memory whole.
   */
  private writeWithBackpressure(text: string): Promise<void> | undefined {
    if (this.stdout.write(text)) return undefined
    return new Promise((resolve) => {
      const done = () => {
        this.stdout.off('drain', done)
        this.stdout.off('error', done)
        this.stdout.off('close', done)
        resolve()
      }
      this.stdout.on('drain', done)
      this.stdout.on('error', done)
      this.stdout.on('close', done)
    })
  }

  /** Raw text on stdout (e.g. `session path`), never under --json. */
  writeOut(text: string | Uint8Array): void {
    this.stdout.write(text)
  }

  /**
   * A progress line on stderr (`harness: cleanup 3/120 3f9a12c8`), redrawn in place; only on a terminal, and
   * never under --json or -q, so logs and pipes get nothing.
   */
  progress(label: string): ProgressReporter {
    if (this.options.json || this.options.quiet || !this.stderr.isTTY) return silentProgress
    let drawn = false
    return {
      step: (done, total, item) => {
        const text = `harness: ${label} ${done + 1}/${total} ${item}`
        const width = this.stderr.columns ? this.stderr.columns - 1 : text.length
        this.stderr.write(`\r\x1b[K${text.slice(0, width)}`)
        drawn = true
      },
      end: () => {
        if (drawn) this.stderr.write('\r\x1b[K')
        drawn = false
      },
    }
  }

  /** A diagnostic line on stderr (suppressed by --quiet, never on stdout). */
  info(message: string): void {
    if (!this.options.quiet) this.stderr.write(`${terminalSafe(message)}\n`)
  }

  /** A warning on stderr; always shown. */
  warn(message: string): void {
    this.stderr.write(`harness: warning: ${terminalSafeLine(message)}\n`)
  }

  error(error: unknown): number {
    const { text, exitCode } = formatError(error, this.options.json, this.env.HARNESS_DEBUG === '1')
    if (text) this.stderr.write(text)
    return exitCode
  }
}

function ignoreBrokenPipe(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE' || error.code === 'EIO') return
  throw error
}

/** Hints are one line each, whatever a library or a tool put in them. */
const oneLine = (text: string) => text.trim().replace(/\s*\n\s*/g, ' ')

/**
 * A message's first line, and the lines after it (a multi-line setup script, a tool's report): shown as indented
 * lines under the first, never run together into one unreadable line.
 */
function messageLines(text: string): { first: string; rest: string[] } {
  const lines = text
    .trim()
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
  return { first: lines[0]?.trim() ?? '', rest: lines.slice(1) }
}

/**
 * Renders an error for people (`harness: …` + hint) or as one JSON object, and picks the exit code; `debug`
 * (HARNESS_DEBUG=1) adds the stack of an unexpected error.
 */
export function formatError(
  error: unknown,
  json: boolean,
  debug = false,
): { text: string; exitCode: number } {
  if (error instanceof ExitRequest) return { text: '', exitCode: error.exitCode }
  if (error instanceof HarnessError) {
    const { first, rest } = messageLines(error.message)
    if (json) {
      // The message stays one line; the lines after it lead the details.
      const body: Record<string, unknown> = { code: error.code, message: first, exit_code: error.exitCode }
      if (error.hint) body.hint = oneLine(error.hint)
      const details = [...rest, ...(error.details ?? [])]
      if (details.length) body.details = details
      return { text: `${JSON.stringify({ error: body })}\n`, exitCode: error.exitCode }
    }
    const hint = error.hint ? `hint: ${terminalSafe(oneLine(error.hint))}\n` : ''
    const more = rest.map((line) => `  ${terminalSafeLine(line)}\n`).join('')
    const details = (error.details ?? []).map((line) => `  | ${terminalSafeLine(line)}\n`).join('')
    return {
      text: `harness: ${terminalSafe(first)}\n${more}${details}${hint}`,
      exitCode: error.exitCode,
    }
  }
  const message = oneLine(error instanceof Error ? error.message : String(error))
  const stack = debug && error instanceof Error && error.stack ? `${error.stack}\n` : ''
  if (json) {
    return {
      text: `${JSON.stringify({ error: { code: 'UNEXPECTED', message, exit_code: 1 } })}\n${stack}`,
      exitCode: 1,
    }
  }
  return {
    text: `harness: unexpected error: ${terminalSafe(message)}\n${stack || 'hint: set HARNESS_DEBUG=1 for a stack trace\n'}`,
    exitCode: 1,
  }
}
