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

const count = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? value : null

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
