import { displayWidth } from '../render/text.js'
import { relativeTime } from '../render/time.js'
import type { DashboardDetail, DashboardSession } from './port.js'

// What the dashboard shows, as pure functions of the sessions and the screen's size: which rows, which columns
// fit, the state text, the filter, the header and footer. The Ink components only put these lines on screen.

/** Below this the dashboard says the terminal is too small instead of drawing a list nobody can read. */
const MIN_COLUMNS = 40
const MIN_ROWS = 10

export interface Size {
  columns: number
  rows: number
}

export function tooSmall(size: Size): boolean {
  return size.columns < MIN_COLUMNS || size.rows < MIN_ROWS
}

/** The message for a terminal below 40×10, cut to what there is. */
export function tooSmallLines(size: Size): string[] {
  const words = ['terminal too small', `(${size.columns}×${size.rows}, needs ${MIN_COLUMNS}×${MIN_ROWS})`]
  return words.map((w) => fitLine(w, size.columns)).slice(0, Math.max(1, size.rows - 1))
}

export type ColumnKey = 'id' | 'name' | 'project' | 'agent' | 'status' | 'state' | 'age' | 'cost' | 'task'

export interface Column {
  key: ColumnKey
  header: string
  width: number
}

const HEADERS: Record<ColumnKey, string> = {
  id: 'ID',
  name: 'NAME',
  project: 'PROJECT',
  agent: 'AGENT',
  status: 'STATUS',
  state: 'STATE',
  age: 'AGE',
  cost: 'COST',
  task: 'TASK',
}
/** Left to right. */
const ORDER: ColumnKey[] = ['id', 'name', 'project', 'agent', 'status', 'state', 'age', 'cost', 'task']
/** The columns that give way when the screen is narrow, the first kept longest; id, status and state never do. */
const OPTIONAL: ColumnKey[] = ['task', 'age', 'agent', 'name', 'project', 'cost']
/** Columns that shrink (with "…") before they are dropped, and the least they shrink to. */
const SHRINKS: Partial<Record<ColumnKey, number>> = { task: 8, name: 6, project: 8, agent: 6 }
const MAX: Partial<Record<ColumnKey, number>> = { name: 20, project: 24, agent: 12 }

/** The selection marker before each row: "› " on the selected one, two spaces elsewhere. */
export const MARKER = 2
const GAP = 2

/** The text of one cell (before it is fitted). */
export function cellText(session: DashboardSession, key: ColumnKey, now: Date): string {
  switch (key) {
    case 'id':
      return session.id
    case 'name':
      return session.name ?? '-'
    case 'project':
      return session.project ?? '-'
    case 'agent':
      return session.agent
    case 'status':
      return session.status
    case 'state':
      return stateText(session)
    case 'age':
      return relativeTime(session.createdAt, now)
    case 'cost':
      return session.cost
    case 'task':
      return session.task
  }
}

/** The agent's live state: busy, waiting (for you), idle or unknown for a running tmux session; '-' otherwise. */
export function stateText(session: DashboardSession): string {
  return session.state || '-'
}

/** Which columns a listing shows at `width` columns, and how wide each is. */
export function fitColumns(sessions: DashboardSession[], width: number, now: Date): Column[] {
  const natural = (key: ColumnKey) =>
    Math.min(
      MAX[key] ?? Number.POSITIVE_INFINITY,
      Math.max(displayWidth(HEADERS[key]), ...sessions.map((s) => displayWidth(cellText(s, key, now)))),
    )
  const present = (key: ColumnKey) =>
    key === 'name'
      ? sessions.some((s) => s.name)
      : key === 'project'
        ? sessions.some((s) => s.project)
        : key === 'cost'
          ? sessions.some((s) => s.cost !== '-')
          : true
  const widths = new Map<ColumnKey, number>()
  for (const key of ['id', 'status', 'state'] as const) widths.set(key, natural(key))
  let used = MARKER + [...widths.values()].reduce((a, b) => a + b, 0) + GAP * (widths.size - 1)
  for (const key of OPTIONAL) {
    if (!present(key)) continue
    const least = Math.min(SHRINKS[key] ?? natural(key), natural(key))
    if (used + GAP + least > width) continue
    widths.set(key, least)
    used += GAP + least
  }
  // What is left goes to the shrinking columns, up to their natural width, the task last (it takes the rest).
  for (const key of ['agent', 'name', 'project', 'task'] as const) {
    const current = widths.get(key)
    if (current === undefined) continue
    const grow = Math.min(natural(key) - current, width - used)
    if (grow > 0) {
      widths.set(key, current + grow)
      used += grow
    }
  }
  return ORDER.filter((key) => widths.has(key)).map((key) => ({
    key,
    header: HEADERS[key],
    width: widths.get(key) as number,
  }))
}

/** `text` cut or padded to exactly `width` columns. */
export function pad(text: string, width: number): string {
  const cut = fitLine(text, width)
  return cut + ' '.repeat(Math.max(0, width - displayWidth(cut)))
}

/** A line cut to `width` columns (never wider than the screen), "…" marking the cut; its spaces kept. */
export function fitLine(text: string, width: number): string {
  if (displayWidth(text) <= width) return text
  if (width <= 0) return ''
  let out = ''
  let used = 0
  for (const char of text) {
    const w = displayWidth(char)
    if (used + w > width - 1) break
    out += char
    used += w
  }
  return `${out}…`
}

export function headerRow(columns: Column[]): string {
  return `${' '.repeat(MARKER)}${columns.map((c) => pad(c.header, c.width)).join(' '.repeat(GAP))}`.trimEnd()
}

/**
 * The sessions that match a filter: every word of it appears (any case) in the id, name, project, agent,
 * status, state, branch or task. An empty filter matches all.
 */
export function filterSessions(sessions: DashboardSession[], filter: string): DashboardSession[] {
  const words = filter.toLowerCase().split(/\s+/).filter(Boolean)
  if (words.length === 0) return sessions
  return sessions.filter((s) => {
    const text = [s.id, s.name, s.project, s.agent, s.status, s.state, s.branch, s.task]
      .filter(Boolean)
      .join(' ')
      .toLowerCase()
    return words.every((word) => text.includes(word))
  })
}

/** The first row shown so that the selected one is visible, moving the window as little as possible. */
export function scrollStart(selected: number, total: number, visible: number, previous: number): number {
  if (visible <= 0 || total <= visible) return 0
  let start = Math.min(Math.max(previous, 0), total - visible)
  if (selected < start) start = selected
  if (selected >= start + visible) start = selected - visible + 1
  return start
}

/** The header line: where, how many, how many wait for you, and the filter. */
export function titleLine(
  title: string,
  shown: DashboardSession[],
  total: number,
  filter: string,
  width: number,
): string {
  const waiting = shown.filter((s) => s.statusCode === 'RUNNING' && s.state === 'waiting').length
  const running = shown.filter((s) => s.statusCode === 'RUNNING').length
  const count = shown.length === total ? `${total}` : `${shown.length} of ${total}`
  const parts = [
    `harness ui: ${title}`,
    `${count} ${total === 1 ? 'session' : 'sessions'}`,
    ...(running ? [`${running} running`] : []),
    ...(waiting ? [`${waiting} waiting`] : []),
    ...(filter ? [`filter: ${filter}`] : []),
  ]
  return fitLine(parts.join(' · '), width)
}

export interface FooterKey {
  key: string
  label: string
  /** What `?` says of it. */
  help: string
}

/** The keys, in the footer's order. */
export const KEYS: FooterKey[] = [
  {
    key: 'enter',
    label: 'attach',
    help: 'attach to a tmux session (detach: Ctrl-b d), else follow its log',
  },
  { key: 's', label: 'send', help: "type a line into a tmux session's agent (session send)" },
  { key: 'd', label: 'diff', help: 'what the session changed against its base (session diff)' },
  { key: 'l', label: 'logs', help: "the session's log (session logs)" },
  { key: 'k', label: 'kill', help: 'stop it and everything it started, after y (session kill)' },
  { key: 'p', label: 'pause', help: 'stop it gracefully so it can be resumed (session pause)' },
  {
    key: 'r',
    label: 'resume',
    help: 'resume it, in tmux if it last ran there, else detached (session resume)',
  },
  { key: 'm', label: 'merge', help: 'its dry run first, then y lands it on its base branch (session merge)' },
  { key: 'n', label: 'new', help: 'start a session: agent, task, backend, detached or in tmux (run)' },
  {
    key: '/',
    label: 'filter',
    help: 'show only sessions whose id, name, agent, status, state or task match',
  },
  { key: '?', label: 'help', help: 'this help' },
  { key: 'q', label: 'quit', help: 'leave (the terminal is restored); Ctrl-C too' },
]

/**
 * The footer's keys at `width`, over at most `lines` lines: all of them where they fit, else as many as fit
 * with "? help" always last, so every key is one press away.
 */
export function footerLines(width: number, lines: number): string[] {
  const items = KEYS.map((k) => `${k.key} ${k.label}`)
  const pack = (list: string[]) => {
    const out: string[] = []
    let line = ''
    for (const item of list) {
      const next = line ? `${line}  ${item}` : item
      if (displayWidth(next) <= width || !line) line = next
      else {
        out.push(line)
        line = item
      }
    }
    if (line) out.push(line)
    return out
  }
  const all = pack(items)
  if (all.length <= lines) return all.map((l) => fitLine(l, width))
  const help = items.filter((i) => i.startsWith('? '))
  const rest = items.filter((i) => !i.startsWith('? ') && !i.startsWith('q '))
  for (let keep = rest.length; keep >= 0; keep--) {
    const packed = pack([...rest.slice(0, keep), ...help])
    if (packed.length <= lines) return packed.map((l) => fitLine(l, width))
  }
  return [fitLine(help[0] ?? '? help', width)]
}

/** What `?` shows. */
export function helpLines(width: number): string[] {
  const keyWidth = Math.max(...KEYS.map((k) => k.key.length))
  return [
    'harness ui: keys',
    '',
    ...KEYS.map((k) => fitLine(`  ${k.key.padEnd(keyWidth)}  ${k.help}`, width)),
    fitLine(`  ${'↑ ↓'.padEnd(keyWidth)}  select (also Home End, g G, PgUp PgDn)`, width),
    '',
    fitLine('The list is redrawn when a record changes. Any key closes this help.', width),
  ]
}

/** How the screen's rows are shared: the list (with its header row), the detail pane, the message and footer. */
export interface Layout {
  listRows: number
  detailRows: number
  footerRows: number
}

export function layout(size: Size): Layout {
  // The title, the table's header row, the message line: always there.
  const fixed = 3
  const footerRows = size.rows < 16 ? 1 : Math.min(2, footerLines(size.columns, 2).length)
  // Ink draws one line short of the screen's height so that the terminal never scrolls.
  const free = size.rows - 1 - fixed - footerRows
  const detailRows = size.rows >= 16 ? Math.max(0, Math.min(14, Math.floor(free * 0.45))) : 0
  return { listRows: Math.max(1, free - detailRows), detailRows, footerRows }
}

/** The detail pane's lines: the selected session's diff stat, last log lines and checkpoints, fitted. */
export function detailLines(
  session: DashboardSession | undefined,
  detail: DashboardDetail | undefined,
  width: number,
  rows: number,
): string[] {
  if (rows <= 0) return []
  const rule = '─'.repeat(Math.max(0, width))
  if (!session) return [rule]
  const head = [session.id, session.name, session.branch !== '-' ? session.branch : null, session.task]
    .filter(Boolean)
    .join(' · ')
  const lines = [rule, fitLine(head, width)]
  if (!detail || detail.id !== session.id) return [...lines, 'loading…'].slice(0, rows)
  const budget = rows - lines.length
  const sections: [string, string[]][] = [
    ['changes', detail.diff],
    ['checkpoints', detail.checkpoints],
    ['log', detail.log],
  ]
  // Each section gets its share; the log, last, takes what the others leave.
  let left = budget
  const shares = sections.map(([, body], i) => {
    const want = 1 + Math.max(1, body.length)
    const share = i === sections.length - 1 ? left : Math.min(want, Math.max(2, Math.floor(budget / 3)))
    const given = Math.max(0, Math.min(share, left))
    left -= given
    return given
  })
  sections.forEach(([name, body], i) => {
    const share = shares[i] ?? 0
    if (share < 2) return
    const shown = name === 'log' ? body.slice(-(share - 1)) : body.slice(0, share - 1)
    lines.push(
      fitLine(`${name}:`, width),
      ...(shown.length ? shown : ['  -']).map((l) => fitLine(`  ${l}`, width)),
    )
  })
  return lines.slice(0, rows)
}

/** The empty list's message. */
export function emptyLines(filtered: boolean, width: number): string[] {
  return filtered
    ? [fitLine('No session matches the filter (/ to change it, Esc clears it).', width)]
    : [fitLine('No sessions yet. Press n to start one.', width)]
}
