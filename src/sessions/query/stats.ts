import { join } from 'node:path'
import { worktreeRoot } from '../../config.js'
import { lstatOrNull, readDirNames } from '../../disk/door.js'
import { runTimeMs } from '../../history/usage.js'
import type { SessionEnv } from '../ports.js'
import { SESSION_STATUSES, type SessionRecord } from '../record/schema.js'

export interface AgentTotals {
  sessions: number
  agent_time_ms: number
  total_tokens: number | null
  cost_usd: number | null
}

export interface SessionStats {
  sessions: number
  by_status: Record<string, number>
  by_agent: Record<string, AgentTotals>
  /** Record files that do not parse or validate (each is also reported on stderr). */
  corrupt: number
  /** Records harness did not seal (see docs/history.md). */
  foreign: number
  checkpoints: number
  oldest: { id: string; created_at: string } | null
  newest: { id: string; created_at: string } | null
  /** The time agents ran: the sum of every run (a RUNNING session's current run counts until now). */
  agent_time_ms: number
  tokens: {
    total_tokens: number | null
    input_tokens: number | null
    output_tokens: number | null
    cached_tokens: number | null
    /** How many sessions reported any usage. */
    sessions_with_usage: number
  }
  cost_usd: number | null
  /** Bytes of the files (apparent sizes, symlinks not followed) in each of harness's folders. */
  disk: { records: number; logs: number; agent_files: number; worktrees: number; total: number }
}

const addNullable = (a: number | null, b: unknown): number | null =>
  typeof b === 'number' && Number.isFinite(b) ? (a ?? 0) + b : a

/**
 * Totals over a project's sessions (pure: records in, figures out). `isForeign` says which records harness did
 * not seal; the disk figures are measured separately.
 */
function summarize(
  records: readonly SessionRecord[],
  options: { corrupt: number; now: Date; isForeign?: (record: SessionRecord) => boolean },
): Omit<SessionStats, 'disk'> {
  const byStatus: Record<string, number> = Object.fromEntries(SESSION_STATUSES.map((s) => [s, 0]))
  // Provider names come from records on disk: no prototype to collide with ("__proto__").
  const byAgent: Record<string, AgentTotals> = Object.create(null)
  const tokens: SessionStats['tokens'] = {
    total_tokens: null,
    input_tokens: null,
    output_tokens: null,
    cached_tokens: null,
    sessions_with_usage: 0,
  }
  let cost: number | null = null
  let checkpoints = 0
  let foreign = 0
  let agentTime = 0
  let oldest: SessionStats['oldest'] = null
  let newest: SessionStats['newest'] = null
  let oldestMs = Number.POSITIVE_INFINITY
  let newestMs = Number.NEGATIVE_INFINITY
  for (const record of records) {
    byStatus[record.status] = (byStatus[record.status] ?? 0) + 1
    if (options.isForeign?.(record)) foreign++
    checkpoints += record.checkpoints?.length ?? 0
    const created = Date.parse(record.created_at)
    if (created < oldestMs || (created === oldestMs && oldest && record.id < oldest.id)) {
      oldestMs = created
      oldest = { id: record.id, created_at: record.created_at }
    }
    if (created > newestMs || (created === newestMs && newest && record.id < newest.id)) {
      newestMs = created
      newest = { id: record.id, created_at: record.created_at }
    }
    const time = runTimeMs(record.runs, record.status === 'RUNNING' ? options.now : undefined) ?? 0
    agentTime += time
    byAgent[record.provider] ??= { sessions: 0, agent_time_ms: 0, total_tokens: null, cost_usd: null }
    const agent = byAgent[record.provider] as AgentTotals
    agent.sessions++
    agent.agent_time_ms += time
    let reported = false
    for (const run of record.runs ?? []) {
      const usage = run.usage
      if (!usage) continue
      reported = true
      tokens.input_tokens = addNullable(tokens.input_tokens, usage.input_tokens)
      tokens.output_tokens = addNullable(tokens.output_tokens, usage.output_tokens)
      tokens.cached_tokens = addNullable(tokens.cached_tokens, usage.cached_tokens)
      cost = addNullable(cost, usage.cost_usd)
      agent.cost_usd = addNullable(agent.cost_usd, usage.cost_usd)
      const runTokens = addNullable(addNullable(null, usage.input_tokens), usage.output_tokens)
      agent.total_tokens = addNullable(agent.total_tokens, runTokens)
    }
    if (reported) tokens.sessions_with_usage++
  }
  if (tokens.input_tokens !== null || tokens.output_tokens !== null) {
    tokens.total_tokens = (tokens.input_tokens ?? 0) + (tokens.output_tokens ?? 0)
  }
  const round = (usd: number | null) => (usd === null ? null : Math.round(usd * 1e6) / 1e6)
  for (const agent of Object.values(byAgent)) agent.cost_usd = round(agent.cost_usd)
  return {
    sessions: records.length,
    by_status: byStatus,
    by_agent: byAgent,
    corrupt: options.corrupt,
    foreign,
    checkpoints,
    oldest,
    newest,
    agent_time_ms: agentTime,
    tokens,
    cost_usd: round(cost),
  }
}

/** Sum of the sizes of the files under `path` (not following symlinks; a symlink counts its own size). */
function treeBytes(path: string): number {
  const stat = lstatOrNull(path)
  if (!stat) return 0
  if (!stat.isDirectory()) return stat.size
  let total = 0
  let names: string[]
  try {
    names = readDirNames(path)
  } catch {
    return 0
  }
  for (const name of names) total += treeBytes(join(path, name))
  return total
}

/** Bytes of the files directly in a folder (records, logs: flat folders, so no walk). */
function flatBytes(dir: string): number {
  let total = 0
  let names: string[]
  try {
    names = readDirNames(dir)
  } catch {
    return 0
  }
  for (const name of names) {
    const stat = lstatOrNull(join(dir, name))
    if (stat) total += stat.isDirectory() ? treeBytes(join(dir, name)) : stat.size
  }
  return total
}

/** `harness session stats`: reads every record once (through the port's store), then measures harness's folders. */
export async function sessionStats(ctx: SessionEnv): Promise<SessionStats> {
  const paths = await ctx.project()
  const store = await ctx.store()
  // The store reports each corrupt file (a warning); a listed record that cannot be read is one.
  let corrupt = 0
  const records: SessionRecord[] = []
  for (const id of store.recordIds()) {
    const record = store.read(id)
    if (record) records.push(record)
    else if (store.exists(id)) corrupt++
  }
  const summary = summarize(records, {
    corrupt,
    now: new Date(ctx.clock.now()),
    isForeign: (record) => record.sealed === false,
  })
  const config = await ctx.config()
  const disk = {
    records: flatBytes(paths.sessionsDir),
    logs: flatBytes(paths.logsDir),
    agent_files: treeBytes(join(paths.harnessDir, 'agents')),
    worktrees: treeBytes(worktreeRoot(config, paths.root)),
    total: 0,
  }
  disk.total = disk.records + disk.logs + disk.agent_files + disk.worktrees
  return { ...summary, disk }
}
