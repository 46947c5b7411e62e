import { describe, expect, test } from 'vitest'
import { displayWidth } from '../../../src/render/text.js'
import {
  detailLines,
  emptyLines,
  filterSessions,
  fitColumns,
  fitLine,
  footerLines,
  helpLines,
  KEYS,
  layout,
  scrollStart,
  stateText,
  titleLine,
  tooSmall,
  tooSmallLines,
} from '../../../src/ui/view.js'
import { NOW, row } from './fixtures.js'

const three = [
  row({ id: 'aaaa1111', status: 'RUNNING', statusCode: 'RUNNING', state: 'waiting', tmux: true }),
  row({ id: 'bbbb2222', status: 'RUNNING (orphaned)', statusCode: 'RUNNING', task: 'fix the flaky test' }),
  row({ id: 'cccc3333', status: 'FAILED', statusCode: 'FAILED', agent: 'codex', cost: '$0.4200' }),
]

describe('columns', () => {
  test('at 120 columns every column is there, each as wide as its widest cell', () => {
    const columns = fitColumns(three, 120, NOW)
    expect(columns.map((c) => c.key)).toEqual(['id', 'agent', 'status', 'state', 'age', 'cost', 'task'])
    expect(columns.find((c) => c.key === 'status')?.width).toBe('RUNNING (orphaned)'.length)
  })

  test('narrower, the cost, agent and age give way in turn, never the id, status or state, and the row fits', () => {
    for (const width of [100, 80, 60, 50, 40]) {
      const columns = fitColumns(three, width, NOW)
      const keys = columns.map((c) => c.key)
      expect(keys).toEqual(expect.arrayContaining(['id', 'status', 'state']))
      expect(columns.find((c) => c.key === 'id')?.width).toBe(8)
      expect(columns.find((c) => c.key === 'status')?.width).toBe(18)
      const used = 2 + columns.reduce((sum, c) => sum + c.width, 0) + 2 * (columns.length - 1)
      expect(used, `at ${width}`).toBeLessThanOrEqual(width)
    }
    expect(fitColumns(three, 60, NOW).map((c) => c.key)).toEqual(['id', 'status', 'state', 'age', 'task'])
    expect(fitColumns(three, 40, NOW).map((c) => c.key)).toEqual(['id', 'status', 'state'])
  })

  test('a name or project column only when some session has one', () => {
    expect(fitColumns(three, 200, NOW).map((c) => c.key)).not.toContain('name')
    const named = [...three, row({ id: 'dddd4444', name: 'auth', project: '~/work/api' })]
    expect(fitColumns(named, 200, NOW).map((c) => c.key)).toEqual([
      'id',
      'name',
      'project',
      'agent',
      'status',
      'state',
      'age',
      'cost',
      'task',
    ])
  })
})

test('the state: busy, waiting, idle or unknown from the screen of a tmux session; "-" for any other', () => {
  expect(stateText(row({ state: 'waiting' }))).toBe('waiting')
  expect(stateText(row({ state: '' }))).toBe('-')
})

describe('filter', () => {
  test('every word must match, in any case, any of id, agent, status, state and task', () => {
    expect(filterSessions(three, '').map((s) => s.id)).toEqual(['aaaa1111', 'bbbb2222', 'cccc3333'])
    expect(filterSessions(three, 'WAITING').map((s) => s.id)).toEqual(['aaaa1111'])
    expect(filterSessions(three, 'running flaky').map((s) => s.id)).toEqual(['bbbb2222'])
    expect(filterSessions(three, 'codex').map((s) => s.id)).toEqual(['cccc3333'])
    expect(filterSessions(three, 'cccc nothing')).toEqual([])
  })
})

test('the window keeps the selection in view and moves as little as it can', () => {
  expect(scrollStart(0, 5, 10, 0)).toBe(0)
  expect(scrollStart(12, 30, 10, 0)).toBe(3)
  expect(scrollStart(12, 30, 10, 5)).toBe(5)
  expect(scrollStart(2, 30, 10, 5)).toBe(2)
  expect(scrollStart(29, 30, 10, 25)).toBe(20)
})

test('the title counts the sessions, the running ones and those waiting for you, and names the filter', () => {
  expect(titleLine('api', three, 3, '', 120)).toBe('harness ui: api · 3 sessions · 2 running · 1 waiting')
  expect(titleLine('api', three.slice(0, 1), 3, 'wait', 120)).toBe(
    'harness ui: api · 1 of 3 sessions · 1 running · 1 waiting · filter: wait',
  )
  expect(displayWidth(titleLine('api', three, 3, '', 30))).toBeLessThanOrEqual(30)
})

describe('footer', () => {
  test('every key where they fit; else as many as fit, and "? help" always', () => {
    const wide = footerLines(140, 1)
    expect(wide).toHaveLength(1)
    for (const key of KEYS) expect(wide[0]).toContain(`${key.key} ${key.label}`)
    const two = footerLines(80, 2)
    expect(two.join(' ')).toContain('q quit')
    for (const width of [40, 50, 60]) {
      const lines = footerLines(width, 1)
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/\? help$/)
      expect(displayWidth(lines[0] as string)).toBeLessThanOrEqual(width)
    }
  })

  test('the help lists every key and fits the screen', () => {
    const lines = helpLines(60)
    for (const key of KEYS) expect(lines.some((l) => l.startsWith(`  ${key.key} `))).toBe(true)
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(60)
  })
})

describe('sizes', () => {
  test('below 40×10 the terminal is too small, and says so within its width', () => {
    expect(tooSmall({ columns: 39, rows: 30 })).toBe(true)
    expect(tooSmall({ columns: 80, rows: 9 })).toBe(true)
    expect(tooSmall({ columns: 40, rows: 10 })).toBe(false)
    const lines = tooSmallLines({ columns: 30, rows: 8 })
    expect(lines[0]).toBe('terminal too small')
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(30)
  })

  test('the rows are shared: the list first, a detail pane from 16 rows on, one line short of the screen', () => {
    expect(layout({ columns: 40, rows: 10 })).toEqual({ listRows: 5, detailRows: 0, footerRows: 1 })
    const big = layout({ columns: 120, rows: 40 })
    expect(big.detailRows).toBeGreaterThan(0)
    expect(3 + big.listRows + big.detailRows + big.footerRows).toBe(39)
    const mid = layout({ columns: 60, rows: 20 })
    expect(3 + mid.listRows + mid.detailRows + mid.footerRows).toBe(19)
  })
})

test('a line is cut to the screen with "…", keeping its spaces and wide characters whole', () => {
  expect(fitLine('  a  b', 10)).toBe('  a  b')
  expect(fitLine('  abcdef', 5)).toBe('  ab…')
  expect(fitLine('日本語のタスク', 6)).toBe('日本…')
  expect(displayWidth(fitLine('日本語のタスク', 6))).toBeLessThanOrEqual(6)
})

test('the detail pane: the session, its changes, checkpoints and the end of its log, within its rows', () => {
  const session = three[0]
  const detail = {
    id: 'aaaa1111',
    diff: [' a.ts | 2 +-', ' 1 file changed'],
    log: ['l1', 'l2', 'l3', 'l4'],
    checkpoints: ['none'],
  }
  const lines = detailLines(session, detail, 60, 12)
  expect(lines.length).toBeLessThanOrEqual(12)
  expect(lines[1]).toContain('aaaa1111')
  expect(lines).toContain('changes:')
  expect(lines).toContain('  l4')
  expect(detailLines(session, undefined, 60, 5)).toContain('loading…')
  expect(detailLines(session, detail, 60, 0)).toEqual([])
})

test('no sessions: says so and that n starts one', () => {
  expect(emptyLines(false, 80)).toEqual(['No sessions yet. Press n to start one.'])
  expect(emptyLines(true, 80)[0]).toMatch(/No session matches the filter/)
})
