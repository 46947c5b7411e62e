import { join } from 'node:path'
import { lstatOrNull } from '../../disk/door.js'
import type { FileChange } from '../../git/diff.js'
import { diffSummary } from '../../git/diff.js'
import { NotOurWorktreeError } from '../../git/own-worktree.js'
import { type Cost, runTimeMs, sumCost } from '../../history/usage.js'
import type { SessionEnv } from '../ports.js'
import { type LogSink, sessionLog, streamLog } from '../query/logs.js'
import { getSession, withFullPrompt } from '../query/query.js'
import { verifiedOrNull } from '../record/seal.js'
import { diffSources } from './diff.js'

/** How many lines of the readable log an export ends with. */
const EXPORT_LOG_LINES = 40

export interface ExportedRun {
  n: number
  kind: string
  started_at: string
  ended_at: string | null
  /** null while the run has no end. */
  duration_ms: number | null
  exit_code: number | null
  signal: string | null
  usage: {
    input_tokens: number | null
    output_tokens: number | null
    cached_tokens: number | null
    cost_usd: number | null
  } | null
}

export interface ExportedCheckpoint {
  n: number
  ref: string
  commit: string
  message: string | null
  created_at: string
  trigger: string | null
  files_changed: number | null
}

/** `session export`: one session as a report (docs/history.md, "Export"). */
export interface SessionExport {
  id: string
  agent: string
  model: string | null
  status: string
  task: string | null
  branch: string | null
  base_commit: string | null
  created_at: string
  completed_at: string | null
  /** The sum of the runs (a RUNNING session's last run counts until `exported_at`). */
  run_time_ms: number | null
  runs: ExportedRun[]
  checkpoints: ExportedCheckpoint[]
  /** What the session changed against its base; null when neither its worktree nor its branch is left. */
  changes: { source: 'worktree' | 'branch'; files: FileChange[]; stat: string } | null
  cost: Cost | null
  context_from: string[]
  /** The last lines of the readable log (as `session logs` shows them); null when there is no log. */
  log: { lines: string[]; total_lines: number } | null
  exported_at: string
}

const orNull = <T>(value: T | null | undefined): T | null => value ?? null

/** Turns a log's bytes into the lines `session logs` shows, passed to `write` (the CLI gives render/'s). */
export type ReadableLog = (write: (text: string) => void) => LogSink

export async function exportSession(
  ctx: SessionEnv,
  input: string,
  readable: ReadableLog,
): Promise<SessionExport> {
  const now = new Date(ctx.clock.now())
  const session = await withFullPrompt(ctx, await getSession(ctx, input))
  const running = session.status === 'RUNNING'
  const runs: ExportedRun[] = (session.runs ?? []).map((run) => {
    const ms = runTimeMs([run], running ? now : undefined)
    const usage = run.usage
    const n = (v: unknown) => (typeof v === 'number' ? v : null)
    return {
      n: run.n,
      kind: run.kind,
      started_at: run.started_at,
      ended_at: orNull(run.ended_at),
      duration_ms: run.ended_at ? ms : null,
      exit_code: orNull(run.exit_code),
      signal: orNull(run.signal),
      usage: usage
        ? {
            input_tokens: n(usage.input_tokens),
            output_tokens: n(usage.output_tokens),
            cached_tokens: n(usage.cached_tokens),
            cost_usd: n(usage.cost_usd),
          }
        : null,
    }
  })
  return {
    id: session.id,
    agent: session.provider,
    model: orNull(session.model),
    status: session.status,
    task: orNull(session.prompt),
    branch: orNull(session.git_branch),
    base_commit: orNull(session.base_commit),
    created_at: session.created_at,
    completed_at: orNull(session.completed_at),
    run_time_ms: runTimeMs(session.runs, running ? now : undefined),
    runs,
    checkpoints: (session.checkpoints ?? []).map((c) => ({
      n: c.n,
      ref: c.ref,
      commit: c.commit,
      message: orNull(c.message),
      created_at: c.created_at,
      trigger: orNull(c.trigger),
      files_changed: orNull(c.files_changed),
    })),
    changes: await changesOf(ctx, session),
    cost: session.cost
      ? {
          total_tokens: orNull(session.cost.total_tokens),
          estimated_cost_usd: orNull(session.cost.estimated_cost_usd),
        }
      : sumCost(session.runs),
    context_from: session.context_from ?? [],
    log: await logTail(ctx, session.id, readable),
    exported_at: now.toISOString(),
  }
}

async function changesOf(
  ctx: SessionEnv,
  session: Awaited<ReturnType<typeof getSession>>,
): Promise<SessionExport['changes']> {
  const base = session.base_commit
  const verified = verifiedOrNull(session)
  if (!base || !verified) return null
  const repoDir = session.base_dir ?? (await ctx.project()).root
  const sources = await diffSources(ctx, verified, repoDir).catch((error: unknown) => {
    // A worktree whose .git no longer names its registration is reported without its changes.
    if (error instanceof NotOurWorktreeError) return null
    throw error
  })
  if (!sources) return null
  const { worktree, branch } = sources
  if (!worktree && !branch) return null
  try {
    const summary = await diffSummary({
      repoDir: worktree ?? repoDir,
      worktreeDir: worktree,
      branch,
      base,
      env: ctx.env,
      tempDir: join((await ctx.project()).harnessDir, 'tmp'),
    })
    return { source: summary.source, files: summary.files, stat: summary.stat }
  } catch {
    // A report is still worth having when git cannot compare (a base commit gone after a history rewrite).
    return null
  }
}

/** The most characters of one log line an export keeps: one huge line must not cost its size in memory. */
const EXPORT_LINE_CHARS = 4000

function clipLine(line: string): string {
  if (line.length <= EXPORT_LINE_CHARS) return line
  // A copy, not a slice: a slice would keep the whole huge line alive for as long as the tail is kept.
  const head = Buffer.from(line.slice(0, EXPORT_LINE_CHARS), 'utf8').toString('utf8')
  return `${head}… (${line.length - EXPORT_LINE_CHARS} more characters)`
}

/** The last lines of the readable log, keeping only those in memory. */
async function logTail(ctx: SessionEnv, id: string, readable: ReadableLog): Promise<SessionExport['log']> {
  const paths = await ctx.project()
  const path = join(paths.logsDir, `${id}.log`)
  if (!lstatOrNull(path)?.isFile()) return null
  const info = await sessionLog(ctx, id)
  const lines: string[] = []
  let total = 0
  let pending = ''
  const renderer = readable((text) => {
    pending += text
    let newline = pending.indexOf('\n')
    while (newline >= 0) {
      lines.push(clipLine(pending.slice(0, newline)))
      total++
      if (lines.length > EXPORT_LOG_LINES) lines.shift()
      pending = pending.slice(newline + 1)
      newline = pending.indexOf('\n')
    }
  })
  await streamLog(ctx, info, false, renderer, () => false)
  return { lines, total_lines: total }
}
