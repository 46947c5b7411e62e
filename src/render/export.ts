import type { SessionExport } from '../sessions/work/export.js'
import { escapeControls, formatCost } from './log.js'
import { elapsed } from './time.js'

/** Text for one table cell: on one line, with what Markdown or HTML would read as markup escaped. */
export function mdCell(text: string): string {
  return escapeControls(text.replace(/\r?\n/g, ' '))
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([`*_[\]#])/g, '\\$1')
}

/** A fenced block that no line of `body` can close: the fence is longer than any run of backticks in it. */
export function fenced(body: string, info = 'text'): string {
  let longest = 0
  for (const match of body.matchAll(/`+/g)) longest = Math.max(longest, match[0].length)
  const fence = '`'.repeat(Math.max(3, longest + 1))
  return `${fence}${info}\n${body}${body.endsWith('\n') || body === '' ? '' : '\n'}${fence}`
}

const code = (text: string) => `\`${text}\``

function table(head: string[], rows: string[][]): string[] {
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ]
}

function duration(ms: number | null): string {
  if (ms === null) return '-'
  return elapsed('1970-01-01T00:00:00.000Z', new Date(ms).toISOString()) ?? '-'
}

const num = (n: number | null) => (n === null ? '-' : n.toLocaleString('en-US'))

/** `session export --format md`: Markdown that renders on GitHub (docs/history.md, "Export"). */
export function renderExportMarkdown(data: SessionExport): string {
  return [
    `# Session ${data.id}`,
    '',
    ...factsSection(data),
    ...runsSection(data),
    ...costSection(data),
    ...checkpointsSection(data),
    ...filesSection(data),
    ...logSection(data),
  ].join('\n')
}

function factsSection(data: SessionExport): string[] {
  const facts: [string, string][] = [
    ['Agent', mdCell(data.agent)],
    ['Model', data.model ? mdCell(data.model) : '-'],
    ['Status', data.status],
    ['Task', data.task ? mdCell(data.task) : '-'],
    ['Branch', data.branch ? code(data.branch) : '-'],
    ['Base', data.base_commit ? code(data.base_commit.slice(0, 12)) : '-'],
    ['Created', data.created_at],
    ['Run time', duration(data.run_time_ms)],
  ]
  if (data.context_from.length) facts.push(['Context from', data.context_from.map(code).join(', ')])
  return [
    ...table(
      ['', ''],
      facts.map(([k, v]) => [`**${k}**`, v]),
    ),
    '',
  ]
}

function runsSection(data: SessionExport): string[] {
  const out = ['## Runs', '']
  if (data.runs.length === 0) out.push('No runs recorded.', '')
  else {
    const rows = data.runs.map((run) => [
      String(run.n),
      run.kind,
      run.started_at,
      duration(run.duration_ms),
      run.signal ? `signal ${mdCell(run.signal)}` : run.exit_code === null ? '-' : String(run.exit_code),
      run.usage ? num(run.usage.input_tokens) : '-',
      run.usage ? num(run.usage.output_tokens) : '-',
      run.usage?.cost_usd != null ? formatCost(run.usage.cost_usd) : '-',
    ])
    out.push(...table(['#', 'Kind', 'Started', 'Duration', 'Exit', 'Input', 'Output', 'Cost'], rows), '')
  }
  return out
}

function costSection(data: SessionExport): string[] {
  const out = ['## Tokens and cost', '']
  if (!data.cost) out.push('No usage reported.', '')
  else {
    const cost = data.cost.estimated_cost_usd
    out.push(
      ...table(
        ['Total tokens', 'Estimated cost'],
        [[num(data.cost.total_tokens), cost === null ? '-' : formatCost(cost)]],
      ),
      '',
    )
  }
  return out
}

function checkpointsSection(data: SessionExport): string[] {
  const out = ['## Checkpoints', '']
  if (data.checkpoints.length === 0) out.push('No checkpoints.', '')
  else {
    const rows = data.checkpoints.map((c) => [
      String(c.n),
      code(c.commit.slice(0, 12)),
      c.created_at,
      c.trigger ? mdCell(c.trigger) : '-',
      c.files_changed === null ? '-' : String(c.files_changed),
      c.message ? mdCell(c.message) : '-',
    ])
    out.push(...table(['#', 'Commit', 'Created', 'Trigger', 'Files', 'Message'], rows), '')
  }
  return out
}

function filesSection(data: SessionExport): string[] {
  const out = ['## Files changed', '']
  if (!data.changes) out.push('Unknown: neither the worktree nor the branch is left to compare.', '')
  else if (data.changes.files.length === 0) out.push('None.', '')
  else {
    const rows = data.changes.files.map((f) => [
      code(escapeControls(f.path).replace(/`/g, "'")),
      f.added === null ? 'binary' : `+${f.added}`,
      f.deleted === null ? '' : `-${f.deleted}`,
    ])
    out.push(...table(['File', '+', '-'], rows), '', fenced(escapeControls(data.changes.stat)), '')
  }
  return out
}

function logSection(data: SessionExport): string[] {
  const out = ['## Log', '']
  if (!data.log) out.push('No log (an interactive run writes to the terminal).', '')
  else {
    const { lines, total_lines } = data.log
    if (total_lines > lines.length) out.push(`The last ${lines.length} of ${total_lines} lines:`, '')
    out.push(fenced(lines.map((line) => escapeControls(line.replace(/\t/g, '    '))).join('\n')), '')
  }
  return out
}
