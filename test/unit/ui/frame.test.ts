import { describe, expect, test } from 'vitest'
import { displayWidth } from '../../../src/render/text.js'
import { type Line, type ListFrame, listFrame, pagerFrame } from '../../../src/ui/frame.js'
import { NOW, row } from './fixtures.js'

const text = (line: Line) => line.map((s) => s.text).join('')

function frame(overrides: Partial<ListFrame> = {}): ListFrame {
  const all = Array.from({ length: 30 }, (_, i) =>
    row({
      id: `${String(i).padStart(4, '0')}abcd`,
      status: i % 3 === 0 ? 'RUNNING (orphaned)' : 'COMPLETED (foreign)',
      statusCode: i % 3 === 0 ? 'RUNNING' : 'COMPLETED',
      state: i % 3 === 0 ? 'waiting' : '',
      task: `task ${i} ${'with a long description '.repeat(6)}`,
      cost: '$12.3400/$20.00',
    }),
  )
  return {
    size: { columns: 120, rows: 40 },
    title: 'api',
    all,
    shown: all,
    selected: 0,
    start: 0,
    filter: '',
    detail: undefined,
    message: null,
    prompt: null,
    loaded: true,
    now: NOW,
    ...overrides,
  }
}

describe('the list screen', () => {
  test('at 120×40 and 60×20: one line short of the screen, no line wider, ids and statuses whole', () => {
    for (const size of [
      { columns: 120, rows: 40 },
      { columns: 60, rows: 20 },
      { columns: 40, rows: 10 },
    ]) {
      const { lines } = listFrame(frame({ size }))
      expect(lines, `${size.columns}×${size.rows}`).toHaveLength(size.rows - 1)
      for (const line of lines) expect(displayWidth(text(line))).toBeLessThanOrEqual(size.columns)
      const rows = lines.map(text).filter((l) => /^[› ] \d{4}abcd/.test(l))
      expect(rows.length).toBeGreaterThan(0)
      for (const line of rows)
        expect(line).toMatch(/^[› ] \d{4}abcd {2}(.+ {2})?(RUNNING \(orphaned\)|COMPLETED \(foreign\)) {2}/)
    }
  })

  test('the selected row is marked "›", and the window follows it', () => {
    const { lines, start } = listFrame(frame({ selected: 25, size: { columns: 80, rows: 24 } }))
    expect(start).toBeGreaterThan(0)
    expect(lines.map(text).find((l) => l.startsWith('›'))).toMatch(/^› 0025abcd/)
  })

  test('an error takes two lines (message and hint), in red; a prompt takes the message line', () => {
    const message = { text: 'harness: session "x" is KILLED, not running\nhint: resume it', error: true }
    const { lines } = listFrame(frame({ message }))
    const error = lines.find((l) => text(l).startsWith('harness: session'))
    expect(error?.[0]?.colour).toBe('red')
    expect(lines.map(text)).toContain('hint: resume it')
    const asking = listFrame(frame({ message, prompt: 'kill session 0000abcd? y/n' })).lines.map(text)
    expect(asking).toContain('kill session 0000abcd? y/n')
    expect(asking).not.toContain('hint: resume it')
  })

  test('no sessions: the message that n starts one; too small: says so', () => {
    const empty = listFrame(frame({ all: [], shown: [] })).lines.map(text)
    expect(empty).toContain('No sessions yet. Press n to start one.')
    const small = listFrame(frame({ size: { columns: 30, rows: 8 } })).lines.map(text)
    expect(small[0]).toBe('terminal too small')
  })
})

test('the pager: a title with where it is, lines cut to the screen, the keys or a question last', () => {
  const lines = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(200)}`)
  const shown = pagerFrame({ size: { columns: 60, rows: 20 }, title: 'diff of 0000abcd', lines, offset: 95 })
  expect(shown).toHaveLength(19)
  expect(text(shown[0] as Line)).toBe('diff of 0000abcd (84-100 of 100)')
  for (const line of shown) expect(displayWidth(text(line))).toBeLessThanOrEqual(60)
  expect(text(shown[18] as Line)).toMatch(/q or Esc: back/)
  const asked = pagerFrame({
    size: { columns: 60, rows: 20 },
    title: 't',
    lines,
    offset: 0,
    question: 'merge? y/n',
  })
  expect(text(asked[18] as Line)).toBe('merge? y/n')
})
