import { shellWord } from '../errors.js'
import type { Usage } from '../history/events.js'
import { runTimeMs } from '../history/usage.js'
import { budgetLeft, formatUsd } from '../sessions/budget.js'
import type { SessionView } from '../sessions/query/reconcile.js'
import type { SessionRecord } from '../sessions/record/schema.js'
import { SEAL_PROBLEM_TEXT, type SealProblem } from '../sessions/record/seal.js'
import { collectedLine, containerLine, slurmLine } from './backend.js'
import { formatCost, formatUsage } from './log.js'
import { terminalSafe, terminalSafeLine } from './safe.js'
import { type Column, renderTable } from './table.js'
import { type Colour, paint, plural, STATUS_COLOURS } from './text.js'
import { elapsed, relativeTime } from './time.js'

export interface RenderOptions {
  now?: Date
  width?: number
  color?: boolean
  /** `list --sort updated`: AGE is the time since the last update instead of since creation. */
  ageFrom?: 'created' | 'updated'
  /** The user's home folder: a PROJECT under it is shown as `~/…`. */
  home?: string
}

/** A project folder for a table: under the home folder as `~/…`. */
export function projectLabel(dir: string, home: string | undefined): string {
  if (home && home !== '/' && (dir === home || dir.startsWith(`${home.replace(/\/+$/, '')}/`))) {
    return `~${dir.slice(home.replace(/\/+$/, '').length)}`
  }
  return dir
}

/**
 * "RUNNING", "RUNNING (orphaned)" when liveness is anything but running, "RUNNING (queued: Priority)" for a job
 * waiting in its cluster's queue, "FAILED (to collect)" for a run that ended and is not settled yet,
 * "COMPLETED (foreign)" if unsealed.
 */
export function statusLabel(session: SessionView): string {
  const notes: string[] = []
  if (session.liveness && session.liveness !== 'running') notes.push(session.liveness)
  if (typeof session.queued === 'string') notes.push(`queued: ${session.queued}`)
  if (session.unsettled) notes.push('to collect')
  if (session.sealed === false) notes.push('foreign')
  return notes.length ? `${session.status} (${notes.join(', ')})` : session.status
}

/** The most of a task a table shows, terminal or not: what a record keeps of a long prompt (record/bounds.ts). */
const TASK_LABEL_CHARS = 1000

/**
 * A session as a table row needs it: its prompt cut to what the row shows (a copy, so the whole text is not
 * kept alive), so that a table of shipped records of a megabyte each does not hold them all (docs/security.md).
 */
export function rowOf<T extends { prompt?: string | null }>(view: T): T {
  const prompt = view.prompt
  if (typeof prompt !== 'string' || prompt.length <= TASK_LABEL_CHARS + 1) return view
  return { ...view, prompt: Buffer.from(prompt.slice(0, TASK_LABEL_CHARS + 1), 'utf8').toString('utf8') }
}

/** The prompt on one line (its first TASK_LABEL_CHARS characters); an exec session's command; else "-". */
export function taskLabel(session: {
  provider: string
  prompt?: string | null
  extra_args?: readonly string[] | null
}): string {
  const whole = session.prompt ?? ''
  // Cut first: a shipped record's prompt may be a megabyte, and every row of a table is made of it.
  const prompt = whole.slice(0, TASK_LABEL_CHARS).replace(/\s+/g, ' ').trim()
  if (prompt) return whole.length > TASK_LABEL_CHARS ? `${prompt}…` : prompt
  const command = session.extra_args ?? []
  if (session.provider === 'exec' && command.length) return command.map(shellWord).join(' ')
  return '-'
}

const STATE_COLOURS: Record<string, Colour> = {
  waiting: 'yellow',
  busy: 'cyan',
  idle: 'green',
  unknown: 'gray',
}

/** The agent's state (busy, waiting, idle, unknown) of a running session hosted in tmux; '' otherwise. */
export function agentState(session: SessionRecord): string {
  return session.status === 'RUNNING' && typeof session.state === 'string' ? session.state : ''
}

export function renderSessionList(sessions: SessionView[], options: RenderOptions = {}): string {
  if (sessions.length === 0) return 'No sessions.'
  const now = options.now ?? new Date()
  const color = options.color ?? false
  const columns: Column<SessionView>[] = [{ header: 'ID', value: (s) => terminalSafeLine(s.id) }]
  // `list --all-projects`: where each session was found.
  if (sessions.some((s) => typeof s.project_dir === 'string')) {
    columns.push({
      header: 'PROJECT',
      value: (s) => terminalSafeLine(projectLabel(String(s.project_dir ?? '-'), options.home)),
      shrink: 3,
      min: 10,
      max: 32,
    })
  }
  // Only when some session has one (`run --name`): other listings keep their columns.
  if (sessions.some((s) => typeof s.name === 'string')) {
    columns.push({
      header: 'NAME',
      value: (s) => terminalSafeLine(typeof s.name === 'string' ? s.name : '-'),
      max: 24,
    })
  }
  columns.push(
    { header: 'AGENT', value: (s) => terminalSafeLine(s.provider), max: 12, drop: 1 },
    { header: 'STATUS', value: (s) => paint(statusLabel(s), STATUS_COLOURS[s.status], color) },
  )
  // Only when some session shows one (tmux-hosted runs): other listings keep their columns.
  if (sessions.some((s) => agentState(s))) {
    columns.push({
      header: 'STATE',
      value: (s) => paint(agentState(s) || '-', STATE_COLOURS[agentState(s)], color),
    })
  }
  columns.push(
    {
      header: 'BRANCH',
      value: (s) => terminalSafeLine(s.git_branch ?? '-'),
      shrink: 2,
      min: 12,
      max: 24,
      drop: 2,
    },
    {
      header: 'AGE',
      value: (s) =>
        relativeTime(options.ageFrom === 'updated' ? (s.updated_at ?? s.created_at) : s.created_at, now),
    },
  )
  // Only when some session has a cost or a budget (docs/budgets.md): listings without either keep their columns.
  if (sessions.some((s) => costLabel(s) !== '-')) {
    columns.push({ header: 'COST', value: costLabel, drop: 3 })
  }
  columns.push(
    // The task tells sessions apart: it is the last column to give up room.
    { header: 'TASK', value: (s) => terminalSafeLine(taskLabel(s)), shrink: 1, min: 8 },
  )
  return renderTable(columns, sessions, options.width)
}

/** What the session cost so far, and its budget: "$0.4200", "$0.5100/$0.50", "-/$1.00", or "-". */
export function costLabel(session: SessionRecord): string {
  const cost = session.cost?.estimated_cost_usd
  const spent = typeof cost === 'number' ? formatCost(cost) : '-'
  return typeof session.budget_usd === 'number' ? `${spent}/${formatUsd(session.budget_usd)}` : spent
}

/** The budget and what is left of it, for `show`. */
function budgetLine(session: SessionRecord): string | undefined {
  if (typeof session.budget_usd !== 'number') return undefined
  const cost = session.cost?.estimated_cost_usd
  const spent = typeof cost === 'number' ? cost : 0
  const left = budgetLeft(session.budget_usd, spent)
  return left > 0
    ? `${formatUsd(session.budget_usd)} (${formatCost(left)} left)`
    : `${formatUsd(session.budget_usd)} (reached: ${formatCost(spent)} spent)`
}

const KNOWN_FIELDS = new Set([
  'id',
  'provider',
  'permission',
  'status',
  'worktree_dir',
  'is_worktree',
  'git_branch',
  'base_dir',
  'pid',
  'exit_code',
  'prompt',
  'created_at',
  'updated_at',
  'completed_at',
  'schema_version',
  'rev',
  'model',
  'task_hash',
  'base_commit',
  'agent_session_id',
  'stop_reason',
  'stop_request',
  'runs',
  'checkpoints',
  'files_modified',
  'files_modified_total',
  'prompt_file',
  'metadata',
  'cost',
  'liveness',
  'base_ref',
  'start_subdir',
  'extra_args',
  'seal',
  'sealed',
  'branch_created',
  'log_error',
  'tmux_session',
  'tmux_socket',
  'state',
  'merged_at',
  'merge_commit',
  'merged_head',
  'context_from',
  'budget_usd',
  'name',
  'paused_at',
  'files_added',
  'files_deleted',
  'backend',
  'container',
  'slurm',
  'queued',
  'unsettled',
  // Shown under "Record" (harness's own fields), or not at all (`seal_problem` is said by "Sealed").
  'project',
  'seal_key',
  'seal_problem',
  'project_dir',
])

/**
 * Every field of a record, for people: aligned "label  value" lines, then runs, checkpoints and files, then
 * harness's own bookkeeping under "Record:" and fields this version does not know under "Other fields:".
 */
export function renderSessionDetail(session: SessionView, options: RenderOptions = {}): string {
  const lines = alignedFields(detailFields(session, options.now ?? new Date(), options.color ?? false), '')
  lines.push(
    ...[
      ...renderRuns(session),
      ...renderCheckpoints(session),
      ...renderFiles(session),
      ...renderRecordFields(session),
    ].map(terminalSafeLine),
  )
  const other: DetailField[] = Object.entries(session)
    .filter(([key, value]) => !KNOWN_FIELDS.has(key) && value !== undefined)
    .map(([key, value]) => [key, JSON.stringify(value)])
  if (other.length) lines.push('', 'Other fields:', ...alignedFields(other, '  '))
  return lines.join('\n')
}

/** "label:  value" lines with the values in one column; empty values left out; values made terminal-safe. */
function alignedFields(fields: DetailField[], indent: string): string[] {
  const shown = fields.filter(([, value]) => value !== undefined && value !== null && value !== '')
  const labelWidth = Math.max(0, ...shown.map(([label]) => label.length))
  // A multi-line value (a prompt) continues under its first line, so that the labels stay a column.
  const continued = `\n${indent}${' '.repeat(labelWidth + 2)}`
  return shown.map(
    ([label, value]) =>
      `${indent}${`${label}:`.padEnd(labelWidth + 2)}${(label === 'Status'
        ? String(value)
        : terminalSafe(String(value))
      )
        .trimEnd()
        .replace(/\r?\n/g, continued)}`,
  )
}

/** The session's cost, and where it comes from. */
function costLine(session: SessionView): string | undefined {
  if (typeof session.cost?.estimated_cost_usd !== 'number') return undefined
  const source = session.runs?.some((run) => run.usage?.cost_source === 'pricing')
    ? 'tokens priced by config "pricing"'
    : 'as the agent reported it'
  return `${formatCost(session.cost.estimated_cost_usd)} (${source})`
}

type DetailField = [string, string | number | boolean | null | undefined]

/** The record's known fields as label and value, in the order shown (an empty value is left out). */
function detailFields(session: SessionView, now: Date, color: boolean): DetailField[] {
  const when = (iso: string | null | undefined) => (iso ? `${iso} (${relativeTime(iso, now)})` : undefined)
  return [
    ['ID', session.id],
    ['Name', typeof session.name === 'string' ? session.name : undefined],
    ['Status', paint(statusLabel(session), STATUS_COLOURS[session.status], color)],
    ['State', agentState(session) || undefined],
    ['Agent', session.provider],
    ['Model', session.model],
    ['Permission', session.permission],
    [
      'Sealed',
      session.sealed === false
        ? `no: foreign, shown but never acted on (see "harness session adopt")${sealProblem(session)}`
        : session.sealed
          ? 'yes'
          : undefined,
    ],
    ['Log error', session.log_error],
    ['Task', session.prompt],
    [
      'Prompt file',
      session.prompt_file
        ? `${session.prompt_file.bytes} bytes, kept beside the record (sha256 ${session.prompt_file.sha256})`
        : undefined,
    ],
    ['Worktree', session.worktree_dir],
    ['Is worktree', session.is_worktree],
    ['Branch', session.git_branch],
    ['Base dir', session.base_dir],
    ['Base commit', session.base_commit],
    ['Base ref', typeof session.base_ref === 'string' ? session.base_ref : undefined],
    ['Start dir', typeof session.start_subdir === 'string' ? session.start_subdir : undefined],
    [
      'Extra args',
      Array.isArray(session.extra_args) && session.extra_args.length
        ? session.extra_args.map(shellWord).join(' ')
        : undefined,
    ],
    ['Backend', session.backend ?? undefined],
    ['Container', containerLine(session)],
    ['Slurm job', slurmLine(session)],
    ['Queued', typeof session.queued === 'string' ? session.queued : undefined],
    [
      'Not collected',
      session.unsettled
        ? `its run ended; "harness session collect ${session.id}" brings its work back and records it`
        : undefined,
    ],
    ['Tmux session', typeof session.tmux_session === 'string' ? session.tmux_session : undefined],
    ['Tmux socket', typeof session.tmux_socket === 'string' ? session.tmux_socket : undefined],
    ['PID', session.pid],
    ['Exit code', session.exit_code],
    ['Stop reason', session.stop_reason],
    ['Paused at', session.status === 'PAUSED' ? when(session.paused_at) : undefined],
    [
      'Stop request',
      session.stop_request ? `${session.stop_request.action} at ${session.stop_request.at}` : undefined,
    ],
    ['Work collected', collectedLine(session)],
    ['Created', when(session.created_at)],
    ['Updated', when(session.updated_at)],
    ['Completed', when(session.completed_at)],
    ['Duration', sessionDuration(session, now)],
    ['Tokens', session.cost?.total_tokens?.toLocaleString('en-US')],
    ['Cost', costLine(session)],
    ['Budget', budgetLine(session)],
    ['Agent session', session.agent_session_id],
    ['Merged', when(session.merged_at)],
    ['Merge commit', session.merge_commit],
    ['Merged head', session.merged_head],
    ['Context from', session.context_from?.length ? session.context_from.join(', ') : undefined],
  ]
}

/** Why a foreign record is foreign, in words: "; sealed by another key: another HOME or user?". */
function sealProblem(session: SessionView): string {
  const problem = session.seal_problem
  if (typeof problem !== 'string') return ''
  return `; ${Object.hasOwn(SEAL_PROBLEM_TEXT, problem) ? SEAL_PROBLEM_TEXT[problem as SealProblem] : problem}`
}

/** What harness keeps for itself (the seal's facts, revision, schema, hashes, host facts), under one heading. */
function renderRecordFields(session: SessionRecord): string[] {
  const meta = Object.entries(session.metadata ?? {})
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
  const fields: DetailField[] = [
    ['Project', session.project],
    ['Seal key', session.seal_key],
    ['Revision', session.rev],
    ['Schema', session.schema_version],
    ['Task hash', session.task_hash],
    [
      'Branch made',
      typeof session.branch_created === 'boolean' ? (session.branch_created ? 'yes' : 'no') : undefined,
    ],
    ['Host', meta.length ? meta.join('  ') : undefined],
  ]
  const lines = alignedFields(fields, '  ')
  return lines.length ? ['', "Record (harness's own fields):", ...lines] : []
}

function renderRuns(session: SessionRecord): string[] {
  if (!session.runs?.length) return []
  const lines = ['', 'Runs:']
  for (const run of session.runs) {
    const outcome =
      run.signal != null
        ? `signal ${run.signal}`
        : run.exit_code != null
          ? `exit ${run.exit_code}`
          : run.ended_at
            ? 'ended'
            : 'not ended'
    const duration = elapsed(run.started_at, run.ended_at)
    lines.push(
      `  #${run.n} ${run.kind}  ${run.started_at}${duration ? ` (${duration})` : ''}  pid ${run.pid ?? '-'}  ${outcome}`,
    )
    if (run.args?.length) lines.push(`     args: ${run.args.map(shellWord).join(' ')}`)
    if (run.usage) lines.push(`     usage: ${formatUsage(usageOrNull(run.usage))}`)
  }
  return lines
}

function renderCheckpoints(session: SessionRecord): string[] {
  if (!session.checkpoints?.length) return []
  return [
    '',
    'Checkpoints:',
    ...session.checkpoints.map((c) =>
      [
        `  #${c.n} ${c.commit.slice(0, 12)}  ${c.created_at}`,
        c.trigger ? ` ${c.trigger}` : '',
        c.files_changed != null ? `  ${plural(c.files_changed, 'file')}` : '',
        `  ${c.message ?? ''}`,
      ]
        .join('')
        .trimEnd(),
    ),
  ]
}

/**
 * The changed files, each marked `+` added, `~` modified or `-` deleted. A record written before harness kept
 * which were added and deleted (`files_added`, `files_deleted`) lists them without marks.
 */
function renderFiles(session: SessionRecord): string[] {
  const files = session.files_modified ?? []
  if (!files.length) return []
  if (!Array.isArray(session.files_added) || !Array.isArray(session.files_deleted)) {
    return ['', `Files modified (${filesCount(session)}):`, ...files.map((f) => `  ${f}`)]
  }
  const added = new Set(session.files_added)
  const deleted = new Set(session.files_deleted)
  const mark = (file: string) => (added.has(file) ? '+' : deleted.has(file) ? '-' : '~')
  const counts = { '+': 0, '~': 0, '-': 0 }
  for (const file of files) counts[mark(file)]++
  const summary = [
    counts['+'] ? `${counts['+']} new` : '',
    counts['~'] ? `${counts['~']} modified` : '',
    counts['-'] ? `${counts['-']} deleted` : '',
  ].filter(Boolean)
  return [
    '',
    `Files modified (${filesCount(session)}: ${summary.join(', ')}):`,
    ...files.map((f) => `  ${mark(f)} ${f}`),
  ]
}

/** "12", or "1000 of 52,000" when the record lists only the first of them (sessions/record/bounds.ts). */
function filesCount(session: SessionRecord): string {
  const listed = session.files_modified?.length ?? 0
  const total = session.files_modified_total
  return typeof total === 'number' && total > listed ? `the first ${listed} of ${total}` : String(listed)
}

/**
 * The time the agent ran: the sum of the runs (a RUNNING session's last run counts until now), not the idle time
 * between them; records without runs fall back to created → completed.
 */
export function sessionDuration(session: SessionRecord, now: Date): string | undefined {
  const ms = runTimeMs(session.runs, session.status === 'RUNNING' ? now : undefined)
  if (ms === null) return elapsed(session.created_at, session.completed_at)
  return elapsed('1970-01-01T00:00:00.000Z', new Date(ms).toISOString())
}

function usageOrNull(usage: NonNullable<NonNullable<SessionRecord['runs']>[number]['usage']>): Usage {
  const n = (v: unknown) => (typeof v === 'number' ? v : null)
  return {
    input_tokens: n(usage.input_tokens),
    output_tokens: n(usage.output_tokens),
    cached_tokens: n(usage.cached_tokens),
    cost_usd: n(usage.cost_usd),
  }
}
