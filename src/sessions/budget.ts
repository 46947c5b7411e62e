import type { HarnessConfig, ModelPricing } from '../config.js'
import { IllegalStateError, UsageError } from '../errors.js'
import type { Usage } from '../history/events.js'
import { costSourceOf } from '../providers/cost.js'
import type { HeadlessOutput } from '../providers/schema.js'
import type { Run } from './record/schema.js'

// What each agent's output says of its cost is the providers' knowledge (providers/cost.ts); run-plan.ts
// still reads it from here.
export { costSourceOf }

/*
 * Budgets (docs/budgets.md): the most a session may cost, all runs together. The decisions are pure and live
 * here; the supervisor (runner.ts) reads the cost from the run's output as it is written and stops the agent.
 */

/** What the supervisor of one run enforces: the limit, and what the session's earlier runs spent. */
export interface RunBudget {
  limit_usd: number
  spent_usd: number
}

/** A run's usage as recorded: with `cost_source: "pricing"` when the cost is its tokens priced by config. */
export type RecordedUsage = Usage & { cost_source?: 'pricing' }

const AMOUNT = /^\$?(\d+(\.\d*)?|\.\d+)$/

/** `--budget 1.50` (or `$1.50`): USD, more than 0. */
export function parseBudget(text: string): number {
  const value = AMOUNT.test(text.trim()) ? Number(text.trim().replace(/^\$/, '')) : Number.NaN
  if (!Number.isFinite(value) || value <= 0) {
    throw new UsageError(
      `invalid --budget "${text}": expected an amount in USD greater than 0, such as 1.50`,
      undefined,
      'INVALID_BUDGET',
    )
  }
  return value
}

/** `pricing.<model>` from the (trusted) config, or null. */
export function pricingFor(config: HarnessConfig, model: string | null | undefined): ModelPricing | null {
  if (!model || !config.pricing || !Object.hasOwn(config.pricing, model)) return null
  return config.pricing[model] ?? null
}

/** Tokens priced per million; cached input tokens at `cached_input` when given, else as input. */
export function priceTokens(usage: Partial<Usage>, pricing: ModelPricing): number | null {
  const input = count(usage.input_tokens)
  const output = count(usage.output_tokens)
  if (input === null && output === null) return null
  const cached = Math.min(count(usage.cached_tokens) ?? 0, input ?? 0)
  const usd =
    ((input ?? 0) - cached) * pricing.input +
    cached * (pricing.cached_input ?? pricing.input) +
    (output ?? 0) * pricing.output
  return roundUsd(usd / 1e6)
}

/** A run's usage with its cost: the agent's own, else its tokens priced (marked so), else as it was. */
export function withPricedCost(usage: Usage | null, pricing: ModelPricing | null): RecordedUsage | null {
  if (!usage || usage.cost_usd !== null || !pricing) return usage
  const priced = priceTokens(usage, pricing)
  return priced === null ? usage : { ...usage, cost_usd: priced, cost_source: 'pricing' }
}

/** What a run cost: the reported cost, else its tokens priced; null when neither is known. */
export function runCostUsd(
  usage: Partial<Usage> | null | undefined,
  pricing: ModelPricing | null,
): number | null {
  if (!usage) return null
  const reported = count(usage.cost_usd)
  if (reported !== null) return reported
  return pricing ? priceTokens(usage, pricing) : null
}

/** What the session's runs spent so far (a run that reported nothing counts 0). */
export function spentUsd(runs: readonly Run[] | null | undefined, pricing: ModelPricing | null): number {
  let total = 0
  for (const run of runs ?? []) total += runCostUsd(run.usage, pricing) ?? 0
  return roundUsd(total)
}

/** Whether the session has spent its budget. */
export function budgetReached(budget: RunBudget, runSpentUsd: number): boolean {
  return roundUsd(budget.spent_usd + runSpentUsd) >= budget.limit_usd
}

/** What a run may still spend. */
export function budgetLeft(limitUsd: number, spent: number): number {
  return Math.max(0, roundUsd(limitUsd - spent))
}

export interface BudgetCheck {
  budgetUsd: number
  provider: { name: string; headless_output: HeadlessOutput | null }
  model: string | null | undefined
  mode: 'interactive' | 'headless' | 'background'
  config: HarnessConfig
}

/**
 * Whether harness can hold this run to a budget: a headless run of an agent whose output says what it costs,
 * or says its tokens with a price for the model in config. Otherwise a usage error naming why. Returns the
 * pricing to use (null: the agent reports its cost).
 */
export function assertBudgetable(check: BudgetCheck): ModelPricing | null {
  const { provider, model, mode, config } = check
  if (mode === 'interactive') {
    throw new UsageError(
      "--budget needs a headless run: harness reads the cost from the agent's JSON output, which an interactive run does not print",
      'add --detach, or run it without a terminal on stdin',
      'BUDGET_NEEDS_HEADLESS',
    )
  }
  const source = costSourceOf(provider.headless_output)
  if (source === null) {
    throw new UsageError(
      `--budget: agent "${provider.name}" reports neither a cost nor tokens in an output harness reads, so what it spends cannot be measured`,
      'budgets work with claude, codex (priced by config "pricing"), opencode and pi-agent; see docs/budgets.md',
      'BUDGET_UNMEASURABLE',
    )
  }
  if (source === 'reported') return null
  const pricing = pricingFor(config, model)
  if (pricing) return pricing
  const example = `'{"input": 1.25, "output": 10}'`
  if (!model) {
    throw new UsageError(
      `--budget: agent "${provider.name}" reports tokens but no cost, and without -m harness cannot tell which model's prices to use`,
      `give the model with -m <model> and its price: harness config set pricing.<model> ${example} (USD per million tokens)`,
      'BUDGET_NEEDS_PRICING',
    )
  }
  throw new UsageError(
    `--budget: agent "${provider.name}" reports tokens but no cost, and config has no pricing for model "${model}"`,
    `set it (USD per million tokens): harness config set pricing.${model} ${example}`,
    'BUDGET_NEEDS_PRICING',
  )
}

/**
 * The budget a resume runs under: `--budget` replaces the session's, and must be more than it spent; without
 * it, the session's own budget applies, and one already spent refuses the resume (exit 4).
 */
export function resumeBudget(
  id: string,
  stored: number | null | undefined,
  given: number | undefined,
  spent: number,
): RunBudget | null {
  const limit = given ?? (typeof stored === 'number' ? stored : undefined)
  if (limit === undefined) return null
  if (given !== undefined && given <= spent) {
    throw new UsageError(
      `--budget ${budgetArg(given)} is not more than session "${id}" has already spent (${formatUsd(spent)})`,
      `give a larger amount, e.g. --budget ${budgetArg(Math.ceil((spent + 0.01) * 100) / 100)}`,
      'BUDGET_SPENT',
    )
  }
  if (given === undefined && spent >= limit) {
    throw new IllegalStateError(
      `session "${id}" has spent its budget: ${formatUsd(spent)} of ${formatUsd(limit)}`,
      `resume it with a larger one: harness session resume ${id} --budget ${budgetArg(Math.ceil((spent + 0.01) * 100) / 100)}`,
      'BUDGET_SPENT',
    )
  }
  return { limit_usd: limit, spent_usd: spent }
}

/**
 * An amount as `--budget` takes it in a line to paste: no `$`, which a shell would expand (`--budget $1.21`
 * becomes `--budget .21` in bash).
 */
function budgetArg(usd: number): string {
  return formatUsd(usd).slice(1)
}

/** USD for messages: cents when whole, else up to 4 places ($1.00, $0.0123). */
export function formatUsd(usd: number): string {
  const cents = Math.round(usd * 100) / 100
  return Math.abs(cents - usd) < 1e-9 ? `$${cents.toFixed(2)}` : `$${usd.toFixed(4)}`
}

/** A recorded count or amount: finite and not negative, else none (a record is input too). */
const count = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null

/** A millionth of a dollar is plenty, and keeps sums free of float noise. */
const roundUsd = (usd: number) => Math.round(usd * 1e6) / 1e6
