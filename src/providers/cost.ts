// What each agent's output format says of a run's cost (docs/budgets.md). Apart from schema.ts, so that what
// reads a budget (a record's view, `session show`) loads no zod.
import type { HeadlessOutput } from './schema.js'

/** Where the cost of a run comes from: the agent reports it, or reports tokens that config prices. */
export type CostSource = 'reported' | 'tokens'

/** What each format says of a run's cost (docs/history.md): claude, opencode and pi the cost, codex tokens. */
const COST_SOURCES: Record<HeadlessOutput, CostSource | null> = {
  'claude-stream-json': 'reported',
  'codex-json': 'tokens',
  'opencode-json': 'reported',
  'pi-json': 'reported',
  'gemini-json': null,
}

/** The cost source of a run whose output is in `format` (none for an output harness does not read). */
export function costSourceOf(format: HeadlessOutput | null | undefined): CostSource | null {
  return format ? COST_SOURCES[format] : null
}
