import { STATUS_COLOURS } from '../render/text.js'
import type { DashboardDetail, DashboardSession } from './port.js'
import {
  type Column,
  cellText,
  detailLines,
  emptyLines,
  fitColumns,
  fitLine,
  footerLines,
  headerRow,
  helpLines,
  layout,
  MARKER,
  pad,
  type Size,
  scrollStart,
  titleLine,
  tooSmall,
  tooSmallLines,
} from './view.js'

// Whole screens as lines of styled pieces, from the dashboard's state: pure, so that what fits where is tested
// without a terminal. The Ink components draw these lines and nothing else.

export type Colour = 'cyan' | 'yellow' | 'green' | 'red' | 'magenta' | 'gray'

export interface Segment {
  text: string
  colour?: Colour
  bold?: boolean
  inverse?: boolean
}

export type Line = Segment[]

export interface Message {
  text: string
  error: boolean
}

const STATE_COLOURS: Record<string, Colour> = {
  waiting: 'yellow',
  busy: 'cyan',
  idle: 'green',
  unknown: 'gray',
}

const plain = (text: string): Line => [{ text }]

export interface ListFrame {
  size: Size
  title: string
  all: DashboardSession[]
  shown: DashboardSession[]
  selected: number
  /** The first row shown last time (the window moves as little as it can). */
  start: number
  filter: string
  detail: DashboardDetail | undefined
  message: Message | null
  /** A field being typed (the filter, a line to send) or a question, in place of the message. */
  prompt: string | null
  loaded: boolean
  now: Date
}

/** The list screen, and the first row it shows. */
export function listFrame(f: ListFrame): { lines: Line[]; start: number } {
  const { columns } = f.size
  if (tooSmall(f.size)) return { lines: tooSmallLines(f.size).map(plain), start: 0 }
  const lay = layout(f.size)
  const bottom = f.prompt !== null ? [f.prompt] : messageLines(f.message)
  const listRows = Math.max(1, lay.listRows - (bottom.length - 1))
  const lines: Line[] = [[{ text: titleLine(f.title, f.shown, f.all.length, f.filter, columns), bold: true }]]
  let start = 0
  if (f.shown.length === 0) {
    const text = f.loaded ? emptyLines(f.filter !== '', columns) : ['loading…']
    lines.push(...text.map(plain))
  } else {
    const table = fitColumns(f.shown, columns, f.now)
    lines.push([{ text: fitLine(headerRow(table), columns), bold: true }])
    start = scrollStart(f.selected, f.shown.length, listRows, f.start)
    f.shown.slice(start, start + listRows).forEach((session, i) => {
      lines.push(rowLine(session, table, f.now, start + i === f.selected))
    })
  }
  while (lines.length < 2 + listRows) lines.push(plain(''))
  const selected = f.shown[f.selected]
  const detail = detailLines(selected, f.detail, columns, lay.detailRows)
  while (detail.length < lay.detailRows) detail.push('')
  lines.push(...detail.map(plain))
  const tone: Colour | undefined = f.prompt === null && f.message?.error ? 'red' : undefined
  lines.push(...bottom.map((text) => [{ text: fitLine(text, columns), ...(tone ? { colour: tone } : {}) }]))
  lines.push(...footerLines(columns, lay.footerRows).map((text) => [{ text, colour: 'gray' as const }]))
  return { lines: toScreen(lines, f.size), start }
}

/** A message takes one line, an error two (its message and its hint); '' when there is none. */
function messageLines(message: Message | null): string[] {
  if (!message) return ['']
  const lines = message.text.split('\n').filter((l) => l.trim() !== '')
  if (lines.length === 0) return ['']
  return message.error ? lines.slice(0, 2) : [lines.join(' · ')]
}

/** One session's row: the state and status in their colours, the selected row in bold. */
function rowLine(session: DashboardSession, table: Column[], now: Date, selected: boolean): Line {
  const line: Line = [{ text: selected ? '› ' : ' '.repeat(MARKER), bold: selected }]
  table.forEach((column, i) => {
    const colour =
      column.key === 'status'
        ? STATUS_COLOURS[session.statusCode]
        : column.key === 'state'
          ? STATE_COLOURS[session.state]
          : undefined
    const text = pad(cellText(session, column.key, now), column.width)
    line.push({
      text: i === table.length - 1 ? text.trimEnd() : `${text}  `,
      ...(colour ? { colour } : {}),
      ...(selected ? { bold: true, inverse: true } : {}),
      ...(column.key === 'state' && session.state === 'waiting' ? { bold: true } : {}),
    })
  })
  return line
}

/** A text to scroll through (a diff, a log, a merge's dry run): its title, the lines, and what the keys do. */
export interface PagerFrame {
  size: Size
  title: string
  lines: string[]
  offset: number
  /** The last line, in place of the keys: a question (a merge's "y/n"). */
  question?: string
  following?: boolean
}

export function pagerRows(size: Size): number {
  return Math.max(1, size.rows - 3)
}

export function pagerFrame(p: PagerFrame): Line[] {
  if (tooSmall(p.size)) return tooSmallLines(p.size).map(plain)
  const { columns } = p.size
  const rows = pagerRows(p.size)
  const total = p.lines.length
  const offset = clampOffset(p.offset, total, rows)
  const where = total > rows ? ` (${offset + 1}-${Math.min(total, offset + rows)} of ${total})` : ''
  const lines: Line[] = [[{ text: fitLine(`${p.title}${where}`, columns), bold: true }]]
  lines.push(...p.lines.slice(offset, offset + rows).map((l) => plain(fitLine(l, columns))))
  while (lines.length < rows + 1) lines.push(plain(''))
  const keys = p.question ?? `↑ ↓ PgUp PgDn: scroll · q or Esc: back${p.following ? ' · following' : ''}`
  lines.push([
    { text: fitLine(keys, columns), ...(p.question ? { bold: true } : { colour: 'gray' as const }) },
  ])
  return toScreen(lines, p.size)
}

/** An offset that shows a full page where there is one. */
function clampOffset(offset: number, total: number, rows: number): number {
  return Math.max(0, Math.min(offset, total - rows))
}

export function helpFrame(size: Size): Line[] {
  if (tooSmall(size)) return tooSmallLines(size).map(plain)
  return toScreen(helpLines(size.columns).map(plain), size)
}

export function formFrame(size: Size, form: string[], message: Message | null): Line[] {
  if (tooSmall(size)) return tooSmallLines(size).map(plain)
  const lines = form.map((l) => plain(fitLine(l, size.columns)))
  if (message) {
    lines.push(plain(''))
    lines.push(
      ...messageLines(message).map((t) => [{ text: fitLine(t, size.columns), colour: 'red' as const }]),
    )
  }
  return toScreen(lines, size)
}

/** Exactly one line short of the screen (so the terminal never scrolls), each at most its width. */
function toScreen(lines: Line[], size: Size): Line[] {
  const rows = Math.max(1, size.rows - 1)
  const out = lines.slice(0, rows)
  while (out.length < rows) out.push(plain(''))
  return out
}
