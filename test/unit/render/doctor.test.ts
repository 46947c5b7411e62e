import { describe, expect, test } from 'vitest'
import type { DoctorReport } from '../../../src/doctor.js'
import { renderDoctor } from '../../../src/render/doctor.js'
import { displayWidth } from '../../../src/render/text.js'

const ids = Array.from({ length: 40 }, (_, i) => `f${String(i).padStart(7, '0')}`)
const report: DoctorReport = {
  usable: true,
  checks: [
    { name: 'git', status: 'ok', detail: 'git version 2.43.0' },
    {
      name: 'sessions',
      status: 'warn',
      detail: `${ids.length} not sealed by harness for you (shown, never acted on): ${ids.join(', ')}`,
      hint: 'check them with "harness session show <id>", then "harness session adopt <id>" (or --all) to take responsibility for them',
    },
  ],
}

describe('doctor, for people', () => {
  test('a long warning is wrapped to the width (80 when not a terminal), under where its text began', () => {
    for (const columns of [80, 120, undefined]) {
      const lines = renderDoctor(report, false, columns).split('\n')
      for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(columns ?? 80)
      const start = lines.findIndex((line) => line.startsWith('warn  sessions  40 not sealed'))
      expect(start).toBeGreaterThan(0)
      // Continuation lines of the detail start at its column; the hint's at the hint's.
      expect(lines[start + 1]).toMatch(/^ {16}\S/)
      const hint = lines.findIndex((line) => line.startsWith(`${' '.repeat(16)}hint: check them`))
      expect(lines[hint + 1]).toMatch(/^ {22}\S/)
      // Nothing lost: the words, in order.
      const words = lines.join(' ').split(/\s+/)
      expect(words).toEqual(expect.arrayContaining(ids.map((id, i) => (i < ids.length - 1 ? `${id},` : id))))
    }
  })

  test('a word longer than a line (a path) is kept whole on a line of its own', () => {
    const path = `/home/user/${'very-long-folder-name/'.repeat(6)}project/.harness`
    const lines = renderDoctor(
      { usable: true, checks: [{ name: '.harness', status: 'ok', detail: `${path} (mode 700)` }] },
      false,
      80,
    ).split('\n')
    expect(lines.slice(0, 2)).toEqual([`ok    .harness  ${path}`, `${' '.repeat(16)}(mode 700)`])
  })
})
