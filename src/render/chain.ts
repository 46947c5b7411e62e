import type { ChainKillResult, ChainRunResult, ChainView } from '../sessions/chains/chains.js'
import { type Column, renderTable } from './table.js'
import { truncate } from './text.js'
import { relativeTime } from './time.js'

function runnerLine(view: ChainView): string {
  const runner = view.runner
  if (!runner) return ''
  const where = runner.detached ? 'detached runner' : 'runner'
  return `, ${where} pid ${runner.pid} (${runner.liveness})`
}

/** `chain status`: `[n] <id>  <STATUS|PENDING>  (<time>)`, and what a pending step waits for. */
export function renderChainStatus(view: ChainView, now: Date = new Date()): string {
  const foreign = view.sealed ? '' : ' [foreign: shown, never run]'
  const lines = [`chain ${view.name}: ${view.state}${runnerLine(view)}${foreign}`]
  if (view.steps.length === 0) lines.push(`  no steps yet: harness chain add ${view.name} -a claude "…"`)
  for (const step of view.steps) {
    const id = (step.session_id ?? '-').padEnd(8)
    const waits = step.waits_for ? ` ${step.waits_for}` : ''
    const what = step.prompt ?? step.extra_args.join(' ')
    const task = what ? `  ${truncate(what.split('\n')[0] ?? '', 60)}` : ''
    lines.push(
      `[${step.n}] ${id}  ${step.status.padEnd(9)}  (${relativeTime(step.time, now)})${waits}${task}`,
    )
  }
  if (view.last_outcome && view.state !== 'running') lines.push(`last run: ${view.last_outcome}`)
  return lines.join('\n')
}

export function renderChainList(views: ChainView[], width?: number): string {
  if (views.length === 0) return 'No chains. Make one: harness chain create <name>'
  const columns: Column<ChainView>[] = [
    { header: 'NAME', value: (v) => v.name },
    { header: 'STATE', value: (v) => (v.sealed ? v.state : `${v.state} (foreign)`) },
    {
      header: 'STEPS',
      value: (v) => `${v.steps.filter((s) => s.status === 'COMPLETED').length}/${v.steps.length} done`,
    },
    { header: 'NEXT', value: (v) => (v.next === null ? '-' : `step ${v.next}`), drop: 1 },
  ]
  return renderTable(columns, views, width)
}

export function renderChainRun(result: ChainRunResult): string {
  return `harness: chain ${result.chain.name}: ${result.message}`
}

export function renderChainKill(result: ChainKillResult): string {
  const step = result.killed_session ? `; step session ${result.killed_session} KILLED` : ''
  return `chain ${result.name} killed (runner pid ${result.runner_pid} stopped${step})`
}
