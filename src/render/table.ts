import Table from 'cli-table3'
import { stripAnsi, truncate } from './text.js'

export interface Column<Row> {
  header: string
  value: (row: Row) => string
  /** Columns that may be cut to fit the width, most expendable first (higher shrinks first). */
  shrink?: number
  /** Never cut below this many characters. */
  min?: number
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
 * line is longer than it; without a width nothing is cut.
 */
export function renderTable<Row>(columns: Column<Row>[], rows: Row[], width?: number): string {
  const cells = rows.map((row) => columns.map((column) => column.value(row)))
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((line) => stripAnsi(line[i] ?? '').length)),
  )
  if (width !== undefined) fitColumns(columns, widths, width)
  const table = new Table({
    head: columns.map((column) => column.header),
    chars: BLANK_CHARS,
    style: { head: [], border: [], compact: true, 'padding-left': 0, 'padding-right': GAP },
  })
  for (const line of cells) {
    table.push(
      line.map((cell, i) => {
        const w = widths[i] ?? 0
        return stripAnsi(cell).length > w ? truncate(stripAnsi(cell), w) : cell
      }),
    )
  }
  return table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
}

function fitColumns<Row>(columns: Column<Row>[], widths: number[], width: number): void {
  const total = () => widths.reduce((sum, w) => sum + w + GAP, 0) - GAP
  const order = columns
    .map((column, i) => ({ i, shrink: column.shrink ?? 0, min: column.min ?? column.header.length }))
    .filter((c) => c.shrink > 0)
    .sort((a, b) => b.shrink - a.shrink)
  for (const { i, min } of order) {
    const excess = total() - width
    if (excess <= 0) return
    const current = widths[i] ?? 0
    widths[i] = Math.max(min, current - excess)
  }
}
