import type { DoctorReport } from '../doctor.js'
import { type Colour, paint, wrapWords } from './text.js'

const MARKS: Record<string, [string, Colour | undefined]> = {
  ok: ['ok  ', 'green'],
  warn: ['warn', 'yellow'],
  fail: ['FAIL', 'red'],
  info: ['-   ', undefined],
}

/** Where a line is wrapped when the output is not a terminal (or its width is unknown). */
const DEFAULT_COLUMNS = 80
/** Below this many columns for the text, it is not wrapped at all: a line per word helps nobody. */
const NARROWEST = 20

/**
 * One line per check (`ok    git  2.43.0`), hints under their line, then the verdict. A detail or hint longer
 * than `columns` (the terminal's width, else 80) continues on lines of its own, under where it began.
 */
export function renderDoctor(report: DoctorReport, color = false, columns = DEFAULT_COLUMNS): string {
  const width = Math.max(...report.checks.map((c) => c.name.length))
  const lines: string[] = []
  const wrapped = (first: string, indent: number, text: string) => {
    const room = columns - indent
    const parts = room >= NARROWEST ? wrapWords(text, room) : [text]
    lines.push(`${first}${parts[0] ?? ''}`, ...parts.slice(1).map((part) => `${' '.repeat(indent)}${part}`))
  }
  for (const check of report.checks) {
    const [mark, colour] = MARKS[check.status] ?? ['?', undefined]
    wrapped(`${paint(mark, colour, color)}  ${check.name.padEnd(width)}  `, width + 8, check.detail)
    if (check.hint && check.status !== 'ok') {
      wrapped(`${' '.repeat(width + 8)}hint: `, width + 14, check.hint)
    }
  }
  lines.push(
    '',
    report.usable ? 'harness is usable here.' : 'harness is not usable here: see the FAIL lines.',
  )
  return lines.join('\n')
}
