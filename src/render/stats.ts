import type { SessionStats } from '../sessions/query/stats.js'
import { escapeControls, formatCost } from './log.js'
import { elapsed, relativeTime } from './time.js'

/** 1536 → "1.5 KiB". */
function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

const duration = (ms: number) => elapsed('1970-01-01T00:00:00.000Z', new Date(ms).toISOString()) ?? '0ms'
const count = (n: number) => n.toLocaleString('en-US')

export function renderStats(stats: SessionStats, now: Date = new Date()): string {
  const statuses = Object.entries(stats.by_status)
    .map(([status, n]) => `${count(n)} ${status.toLowerCase()}`)
    .join(', ')
  const agents = Object.entries(stats.by_agent)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([agent, t]) => {
      const extra = [
        duration(t.agent_time_ms),
        ...(t.total_tokens !== null ? [`${count(t.total_tokens)} tokens`] : []),
        ...(t.cost_usd !== null ? [formatCost(t.cost_usd)] : []),
      ]
      return `${escapeControls(agent)} ${count(t.sessions)} (${extra.join(', ')})`
    })
  const when = (entry: SessionStats['oldest']) =>
    entry ? `${entry.id}  ${entry.created_at} (${relativeTime(entry.created_at, now)})` : '-'
  const d = stats.disk
  const rows: [string, string][] = [
    ['Sessions', `${count(stats.sessions)}${stats.sessions ? ` (${statuses})` : ''}`],
    ['Corrupt', count(stats.corrupt)],
    ['Foreign', count(stats.foreign)],
    ['By agent', agents.length ? agents.join('; ') : '-'],
    ['Checkpoints', count(stats.checkpoints)],
    ['Oldest', when(stats.oldest)],
    ['Newest', when(stats.newest)],
    ['Agent time', duration(stats.agent_time_ms)],
    [
      'Tokens',
      stats.tokens.total_tokens === null
        ? 'unknown (no session reported usage)'
        : `${count(stats.tokens.total_tokens)} (${count(stats.tokens.input_tokens ?? 0)} in, ${count(stats.tokens.cached_tokens ?? 0)} of them cached, ${count(stats.tokens.output_tokens ?? 0)} out; ${count(stats.tokens.sessions_with_usage)} of ${count(stats.sessions)} sessions reported usage)`,
    ],
    [
      'Cost',
      stats.cost_usd === null ? 'unknown' : `${formatCost(stats.cost_usd)} (as the agents reported it)`,
    ],
    [
      'Disk',
      `${formatBytes(d.total)}: records ${formatBytes(d.records)}, logs ${formatBytes(d.logs)}, agent files ${formatBytes(d.agent_files)}, worktrees ${formatBytes(d.worktrees)}`,
    ],
  ]
  const width = Math.max(...rows.map(([label]) => label.length)) + 2
  return rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`).join('\n')
}
