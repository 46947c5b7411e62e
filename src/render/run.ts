import { shellWord } from '../errors.js'
import { formatUsd } from '../sessions/budget.js'
import type { RecoverCandidate, RecoverResult } from '../sessions/control/recover.js'
import type { SendResult } from '../sessions/control/send.js'
import type { StopResult } from '../sessions/control/stop.js'
import type { SessionRecord } from '../sessions/record/schema.js'
import type { RunDryRun } from '../sessions/run/start.js'
import { sessionDuration, taskLabel } from './session.js'
import { type Column, renderTable } from './table.js'
import { plural } from './text.js'

/** One line about how a run ended (or started, in the background). */
export function runSummary(record: SessionRecord): string {
  const code = record.exit_code != null ? `, exit ${record.exit_code}` : ''
  const where = record.is_worktree ? ` in ${record.worktree_dir}` : ''
  if (record.status === 'RUNNING' && typeof record.tmux_session === 'string') {
    return `harness: session ${record.id} started${where} in tmux session ${record.tmux_session} (agent pid ${record.pid ?? '?'}); attach: harness session attach ${record.id}`
  }
  if (record.status === 'RUNNING') {
    // A job of a cluster has no pid here: its id names it (docs/backends.md).
    const what = record.slurm ? `Slurm job ${record.slurm.job_id}` : `agent pid ${record.pid ?? '?'}`
    return `harness: session ${record.id} started${where} (${what}); follow it: harness session logs -f ${record.id}`
  }
  const failure = record.runs?.at(-1)?.error
  const why =
    record.stop_reason === 'start-failed'
      ? ` (the agent could not be started${typeof failure === 'string' ? `: ${failure}` : ''})`
      : record.status === 'PAUSED' && record.stop_reason
        ? ` (${record.stop_reason}; go on: harness session resume ${record.id})`
        : ''
  return `harness: session ${record.id} ${record.status}${code}${why}`
}

/**
 * The line a foreground resume ends with (stderr): `<id>: <time the agent ran, all runs, pauses left out>,
 * <cost so far, or "no cost reported">, <files changed against the base>`.
 */
export function resumeSummary(record: SessionRecord, now: Date): string {
  const cost = record.cost?.estimated_cost_usd
  return [
    `${record.id}: ${sessionDuration(record, now) ?? '0ms'}`,
    typeof cost === 'number' ? formatUsd(cost) : 'no cost reported',
    plural(record.files_modified?.length ?? 0, 'file'),
  ].join(', ')
}

/** stdout of `run --detach` for people: the id alone, so `id=$(harness run -d …)` works too. */
export function renderDetachedRun(record: SessionRecord): string {
  return record.id
}

export function renderStopResult(result: StopResult): string {
  const verb = result.action === 'kill' ? 'killed' : 'paused'
  return `session ${result.record.id} ${verb}${result.via === 'direct' ? ' (its supervisor was gone: stopped directly)' : ''}`
}

/** `session send` for people: what was typed, and where. */
export function renderSend(result: SendResult): string {
  return `sent to ${result.id} (tmux session ${result.tmux_session}): ${JSON.stringify(result.text)} and Enter`
}

export function renderWaitResult(record: SessionRecord): string {
  return `session ${record.id} ${record.status}${record.exit_code != null ? ` (exit ${record.exit_code})` : ''}`
}

export function renderRecoverScan(candidates: RecoverCandidate[], width?: number): string {
  if (candidates.length === 0) return 'No sessions need recovery.'
  const stuck = candidates.filter((c) => c.liveness)
  const sections: string[] = []
  if (stuck.length) {
    const columns: Column<RecoverCandidate>[] = [
      { header: 'ID', value: (c) => c.id },
      { header: 'AGENT', value: (c) => c.provider ?? '-', drop: 1 },
      { header: 'LIVENESS', value: (c) => c.liveness ?? '' },
      {
        header: 'TASK',
        value: (c) => taskLabel({ provider: c.provider ?? '-', prompt: c.prompt }),
        shrink: 1,
        min: 8,
      },
    ]
    sections.push(
      renderTable(columns, stuck, width),
      '',
      'stale/unverified: harness session recover <id> (or --all); orphaned: harness session kill <id> first',
    )
  }
  const damaged = candidates.filter((c) => c.problems.length)
  if (damaged.length) {
    if (sections.length) sections.push('')
    sections.push('Checkpoints and worktrees not as recorded:')
    for (const c of damaged) {
      for (const p of c.problems)
        sections.push(`  ${c.id}: ${p.message}${p.repairable ? ' [repairable]' : ''}`)
    }
    sections.push('repair: harness session recover <id> (or --all)')
  }
  const corrupt = candidates.filter((c) => c.corrupt)
  if (corrupt.length) {
    if (sections.length) sections.push('')
    sections.push('Corrupt records (no temporary file can repair them):')
    for (const c of corrupt) sections.push(`  ${c.corrupt?.path}: ${c.corrupt?.reason}`)
    sections.push('move them to .harness/corrupt/ (with a report each): harness session recover --all')
  }
  return sections.join('\n')
}

export function renderRecoverResult(result: RecoverResult): string {
  const lines = result.recovered.map(
    (r) => `session ${r.id} marked ${r.status} (${r.stop_reason ?? 'recovered'})`,
  )
  for (const s of result.skipped) lines.push(`session ${s.id} skipped: ${s.reason}`)
  for (const r of result.repaired) for (const what of r.what) lines.push(`session ${r.id} repaired: ${what}`)
  for (const u of result.unrepaired) {
    for (const p of u.problems) lines.push(`session ${u.id} not repaired: ${p.message}`)
  }
  for (const q of result.quarantined)
    lines.push(`corrupt record ${q.path} moved to ${q.moved_to} (report: ${q.report})`)
  return lines.length ? lines.join('\n') : 'No sessions needed recovery.'
}

/** `run --dry-run` for people: what would run, where, and the prompt the agent would get. */
export function renderRunDryRun(plan: RunDryRun): string {
  const lines = [
    `dry run: nothing was started or created`,
    `session:  ${plan.id}${plan.name ? `, named ${plan.name}` : ''} (not reserved)`,
    `agent:    ${plan.agent} (${plan.permission}${plan.model ? `, model ${plan.model}` : ''}), ${plan.tmux ? 'interactive in tmux' : plan.mode}`,
    `argv:     ${[plan.command, ...plan.args].map(shellWord).join(' ')}`,
    `cwd:      ${plan.cwd}`,
    plan.worktree
      ? `worktree: ${plan.worktree} (new), branch ${plan.branch} from ${plan.base_commit?.slice(0, 12)}`
      : 'worktree: none, the agent runs in the current directory',
    `config:   checkpoint interval ${plan.config.checkpoint_interval_ms ? `${plan.config.checkpoint_interval_ms / 1000}s` : 'off'}, context limit ${plan.config.context_max_bytes} bytes${plan.config.worktree_setup ? `, setup: ${plan.config.worktree_setup.map(shellWord).join(' ')}` : ''}`,
  ]
  if (plan.context_from.length) lines.push(`context:  from ${plan.context_from.join(', ')}`)
  lines.push(plan.prompt === null ? 'prompt:   (none)' : `prompt:\n${plan.prompt}`)
  return lines.join('\n')
}
