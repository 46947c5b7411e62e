// `session stats` over 10,000 records against `session list --json` over the same store (aim: ≤ 1.5×).
import { compare, output } from './lib.mjs'

export async function benchStats({ harness, dir, env }) {
  const subject = { command: harness, args: ['session', 'stats', '--json'], cwd: dir, env }
  const floor = { label: 'list --json', command: harness, args: ['session', 'list', '--json'], cwd: dir, env }
  const stats = JSON.parse(await output(subject))
  if (stats.sessions !== 10_000) throw new Error(`stats counted ${stats.sessions} sessions`)
  return compare({ label: 'stats, 10,000 records', subject, floor, runs: 9, warmup: 2, aim: 1.5 })
}
