import type { Usage } from './events.js'

export interface Cost {
  total_tokens: number | null
  estimated_cost_usd: number | null
}

interface RunLike {
  started_at: string
  ended_at?: string | null
  usage?: Partial<Usage> | null
}

/** A recorded count or amount: finite and not negative, else none (a record is input too). */
const count = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null

/**
 * The record's `cost`: tokens (input + output) and the providers' own cost summed over the runs that reported
 * them; null when no run did (an unknown format, an interactive run).
 */
export function sumCost(runs: readonly RunLike[] | null | undefined): Cost | null {
  let tokens: number | null = null
  let usd: number | null = null
  for (const run of runs ?? []) {
    const usage = run.usage
    if (!usage) continue
    const input = count(usage.input_tokens)
    const output = count(usage.output_tokens)
    if (input !== null || output !== null) tokens = (tokens ?? 0) + (input ?? 0) + (output ?? 0)
    const cost = count(usage.cost_usd)
    if (cost !== null) usd = (usd ?? 0) + cost
  }
  if (tokens === null && usd === null) return null
  return { total_tokens: tokens, estimated_cost_usd: usd === null ? null : Math.round(usd * 1e6) / 1e6 }
}

/**
 * The time the agent ran: the sum of the runs, not the idle time between them. A run without an end counts
 * until `now` when one is given (the session is RUNNING), else not at all (it ended unrecorded).
 */
export function runTimeMs(runs: readonly RunLike[] | null | undefined, now?: Date): number | null {
  let total: number | null = null
  for (const run of runs ?? []) {
    const start = Date.parse(run.started_at)
    if (!run.ended_at && !now) continue
    const end = run.ended_at ? Date.parse(run.ended_at) : (now as Date).getTime()
    if (!Number.isFinite(start) || !Number.isFinite(end) || end < start) continue
    total = (total ?? 0) + (end - start)
  }
  return total
}

/**
 * The tokens a session's runs before run `n` recorded, summed: what a resumed codex thread's totals already
 * hold (the event reader subtracts it). A run that recorded none (an interactive one) adds nothing.
 */
export function earlierUsage(
  runs: readonly (RunLike & { n: number })[] | null | undefined,
  n: number,
): Usage {
  const sum: Usage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: null }
  for (const run of runs ?? []) {
    if (run.n >= n || !run.usage) continue
    sum.input_tokens = (sum.input_tokens ?? 0) + (count(run.usage.input_tokens) ?? 0)
    sum.output_tokens = (sum.output_tokens ?? 0) + (count(run.usage.output_tokens) ?? 0)
    sum.cached_tokens = (sum.cached_tokens ?? 0) + (count(run.usage.cached_tokens) ?? 0)
  }
  return sum
}
