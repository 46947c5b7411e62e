// What a supervisor reads from the agent's log while and after it runs: the agent's own session id, the usage
// and cost reported, a failure the exit code hides, and the budget watch. The log is read through the
// descriptor the supervisor opened (runner.ts, openLog), as far as it is written.
import { StringDecoder } from 'node:string_decoder'
import { fdSize, readInto } from '../../disk/door.js'
import { EventReader, type Usage } from '../../history/events.js'
import { earlierUsage } from '../../history/usage.js'
import { findCapturedSessionId } from '../../providers/capture.js'
import { findReportedFailure } from '../../providers/failure.js'
import type { HeadlessOutput } from '../../providers/schema.js'
import { budgetReached, type RunBudget, runCostUsd, withPricedCost } from '../budget.js'
import { lastRun } from '../record/liveness.js'
import type { RecordStore as SessionStore } from '../record/record-store.js'
import type { StopRequest } from '../record/schema.js'
import { DEFAULT_GRACE_MS, type RunPlan } from './run-plan.js'

const CAPTURE_LIMIT = 4 * 1024 * 1024

/** The agent's own session id, read from what this run wrote to the log (first 4 MiB). */
export async function capturedSessionId(
  plan: RunPlan,
  logFd: number | undefined,
  from: number,
): Promise<string | undefined> {
  if (!plan.sessionIdCapture || logFd === undefined) return undefined
  const length = Math.min(fdSize(logFd) - from, CAPTURE_LIMIT)
  if (length <= 0) return undefined
  const buffer = Buffer.alloc(length)
  const read = readInto(logFd, buffer, length, from)
  return findCapturedSessionId(
    { session_id_capture: plan.sessionIdCapture },
    buffer.subarray(0, read).toString('utf8'),
  )
}

/**
 * The tokens and cost this run's output reported (docs/history.md), read from the log as it streams past, in
 * the provider's own format only (`format`: its `headless_output`; null reads none); null when the output
 * reported none. Never fails the run.
 */
export async function runUsage(
  logFd: number | undefined,
  from: number,
  earlier: Usage,
  format: HeadlessOutput | null,
): Promise<{ usage: Usage | null; budgetExceeded: boolean }> {
  const none = { usage: null, budgetExceeded: false }
  if (logFd === undefined || format === null) return none
  try {
    const reader = await logReader(logFd, from, earlier, format)
    reader.readToEnd()
    return reader.end()
  } catch {
    return none
  }
}

/** The usage the session's earlier runs recorded: a resumed codex thread reports it again (history/usage.ts). */
export function earlierRunsUsage(plan: RunPlan, store: SessionStore): Usage {
  return earlierUsage(store.get(plan.id)?.runs, plan.runN)
}

/** Reads a run's part of the log, from `from`, through the event reader: as far as it is written, each call. */
async function logReader(logFd: number, from: number, earlier: Usage, format: HeadlessOutput | null) {
  const reader = new EventReader({ earlier, usageFormat: format })
  const lines = new LineSplitter((line) => reader.push(line))
  const decoder = new StringDecoder('utf8')
  const buffer = Buffer.allocUnsafe(1024 * 1024)
  let position = from
  return {
    /** Reads what was written since the last call; the usage so far. */
    readToEnd(): Usage | null {
      for (;;) {
        const n = readInto(logFd, buffer, buffer.length, position)
        if (n <= 0) break
        position += n
        lines.write(decoder.write(buffer.subarray(0, n)))
      }
      return reader.usage
    },
    get budgetExceeded() {
      return reader.budgetExceeded
    },
    end() {
      lines.write(decoder.end())
      lines.end()
      reader.end()
      return { usage: reader.usage, budgetExceeded: reader.budgetExceeded }
    },
  }
}

/** How often the supervisor reads the new part of the log for the cost so far. */
const BUDGET_POLL_MS = 200

/**
 * While the agent runs: reads its output as it reaches the log, and once the session's cost (earlier runs,
 * plus this run's reported cost or priced tokens) reaches the budget, commits a pause request with
 * `reason: "budget"` and hands it to the supervisor, which stops the agent as `session pause` would. A
 * stop already requested by someone else is left as it is. Never fails the run.
 */
export function watchBudget(
  plan: RunPlan,
  store: SessionStore,
  logFd: number,
  from: number,
  onRequest: (request: StopRequest) => void,
): { close(): void } {
  const budget = plan.budget as RunBudget
  let closed = false
  let busy = false
  let timer: NodeJS.Timeout | undefined
  const reader = logReader(logFd, from, earlierRunsUsage(plan, store), plan.headlessOutput ?? null)
  const check = async () => {
    if (closed || busy) return
    busy = true
    try {
      const read = await reader
      const usage = withPricedCost(read.readToEnd(), plan.pricing ?? null)
      const spent = runCostUsd(usage, plan.pricing ?? null) ?? 0
      if (closed || !(read.budgetExceeded || budgetReached(budget, spent))) return
      closed = true
      clearInterval(timer)
      const request: StopRequest = {
        action: 'pause',
        at: new Date().toISOString(),
        by_pid: process.pid,
        grace_ms: DEFAULT_GRACE_MS,
        reason: 'budget',
      }
      const record = await store.update(plan.id, (current) =>
        current.status === 'RUNNING' && lastRun(current)?.n === plan.runN && !current.stop_request
          ? { ...current, stop_request: request }
          : undefined,
      )
      if (record.stop_request) onRequest(record.stop_request)
    } catch {
      // The next poll tries again; a record that cannot be written leaves the run to end by itself.
    } finally {
      busy = false
    }
  }
  timer = setInterval(() => void check(), BUDGET_POLL_MS)
  timer.unref()
  void check()
  return {
    close() {
      closed = true
      clearInterval(timer)
    },
  }
}

/** One endless line is no event stream: longer ones are skipped, not held. */
const MAX_LINE = 16 * 1024 * 1024

/**
 * Splits text that arrives in pieces into lines, looking at each piece once (a log of hundreds of megabytes
 * must not be scanned again for every piece).
 */
class LineSplitter {
  private pending: string[] = []
  private pendingLength = 0
  private skipping = false

  constructor(private readonly onLine: (line: string) => void) {}

  write(text: string): void {
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl)
      if (!this.skipping) this.onLine(this.pending.length > 0 ? this.pending.join('') + piece : piece)
      this.pending = []
      this.pendingLength = 0
      this.skipping = false
      start = nl + 1
    }
    if (start < text.length) this.hold(text.slice(start))
  }

  end(): void {
    if (!this.skipping && this.pending.length > 0) this.onLine(this.pending.join(''))
    this.pending = []
  }

  private hold(piece: string): void {
    if (this.skipping) return
    this.pendingLength += piece.length
    if (this.pendingLength > MAX_LINE) {
      this.pending = []
      this.skipping = true
    } else this.pending.push(piece)
  }
}

/** The failure this run's output reported although the agent exited 0 (read from the log's last 4 MiB). */
export async function reportedFailure(
  plan: RunPlan,
  logFd: number | undefined,
  from: number,
): Promise<string | undefined> {
  if (!plan.headlessOutput || logFd === undefined) return undefined
  const end = fdSize(logFd)
  const start = Math.max(from, end - CAPTURE_LIMIT)
  if (end <= start) return undefined
  const buffer = Buffer.alloc(end - start)
  const read = readInto(logFd, buffer, buffer.length, start)
  return findReportedFailure(plan.headlessOutput, buffer.subarray(0, read).toString('utf8'))
}
