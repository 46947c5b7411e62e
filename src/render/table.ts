import Table from 'cli-table3'
import { displayWidth, stripAnsi, truncate } from './text.js'

export interface Column<Row> {
  header: string
  value: (row: Row) => string
  /** Columns that may be cut to fit the width, most expendable first (higher shrinks first). */
  shrink?: number
  /** Never cut below this many characters. */
  min?: number
  /** When fitting a width, never wider than this (so that one long branch cannot crowd out the task). */
  max?: number
  /** Columns that may be left out when cutting is not enough, most expendable first (higher goes first). */
  drop?: number
}

const GAP = 2
const BLANK_CHARS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '',
}

/**
 * An aligned, borderless table. When `width` is given, shrinkable columns are cut (with "…") so that no
 * line is longer than it, and when that is not enough, droppable columns are left out; without a width
 * nothing is cut.
 */
export function renderTable<Row>(allColumns: Column<Row>[], rows: Row[], width?: number): string {
  const allCells = rows.map((row) => allColumns.map((column) => column.value(row)))
  const natural = allColumns.map((column, i) =>
    Math.max(column.header.length, ...allCells.map((line) => displayWidth(line[i] ?? ''))),
  )
  let shown = allColumns.map((_, i) => i)
  let widths = [...natural]
  if (width !== undefined) {
    for (;;) {
      widths = shown.map((i) => Math.min(natural[i] ?? 0, allColumns[i]?.max ?? Number.POSITIVE_INFINITY))
      fitColumns(
        shown.map((i) => allColumns[i] as Column<Row>),
        widths,
        width,
      )
      if (totalWidth(widths) <= width) break
      const victim = shown
        .filter((i) => (allColumns[i]?.drop ?? 0) > 0)
        .sort((a, b) => (allColumns[b]?.drop ?? 0) - (allColumns[a]?.drop ?? 0))[0]
      if (victim === undefined) break
      shown = shown.filter((i) => i !== victim)
    }
  }
  const table = new Table({
    head: shown.map((i) => allColumns[i]?.header ?? ''),
    chars: BLANK_CHARS,
    style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': GAP },
  })
  for (const line of allCells) {
    table.push(
      shown.map((column, k) => {
        const cell = line[column] ?? ''
        const w = widths[k] ?? 0
        return displayWidth(cell) > w ? truncate(stripAnsi(cell), w) : cell
      }),
    )
  }
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
}

const totalWidth = (widths: number[]) => widths.reduce((sum, w) => sum + w + GAP, 0) - GAP

function fitColumns<Row>(columns: Column<Row>[], widths: number[], width: number): void {
  const order = columns
    .map((column, i) => ({ i, shrink: column.shrink ?? 0, min: column.min ?? column.header.length }))
    .filter((c) => c.shrink > 0)
    .sort((a, b) => b.shrink - a.shrink)
  for (const { i, min } of order) {
    const excess = totalWidth(widths) - width
    if (excess <= 0) return
    const current = widths[i] ?? 0
    widths[i] = Math.max(min, current - excess)
  }
}
