import type { DoctorReport } from '../doctor.js'
import { type Colour, paint } from './text.js'

const MARKS: Record<string, [string, Colour | undefined]> = {
  ok: ['ok  ', 'green'],
  warn: ['warn', 'yellow'],
  fail: ['FAIL', 'red'],
  info: ['-   ', undefined],
}

/** One line per check (`ok    git  2.43.0`), hints under their line, then the verdict. */
export function renderDoctor(report: DoctorReport, color = false): string {
  const width = Math.max(...report.checks.map((c) => c.name.length))
  const lines: string[] = []
  for (const check of report.checks) {
    const [mark, colour] = MARKS[check.status] ?? ['?', undefined]
    lines.push(`${paint(mark, colour, color)}  ${check.name.padEnd(width)}  ${check.detail}`)
    if (check.hint && check.status !== 'ok') lines.push(`${' '.repeat(width + 8)}hint: ${check.hint}`)
  }
  lines.push(
    '',
    report.usable ? 'harness is usable here.' : 'harness is not usable here: see the FAIL lines.',
  )
  return lines.join('\n')
}
