import { describe, expect, test } from 'vitest'
import {
  confirmIntent,
  editLine,
  formLines,
  formRequest,
  formStep,
  keyPieces,
  listIntent,
  newForm,
  pagerIntent,
} from '../../../src/ui/keys.js'
import { KEYS } from '../../../src/ui/view.js'

describe('the list', () => {
  test('each key of the footer means what the footer says', () => {
    const meaning: Record<string, string> = {
      s: 'send',
      d: 'diff',
      l: 'logs',
      k: 'kill',
      p: 'pause',
      r: 'resume',
      m: 'merge',
      n: 'new',
      '/': 'filter',
      '?': 'help',
      q: 'quit',
    }
    for (const { key } of KEYS) {
      if (key === 'enter') expect(listIntent('', { return: true })).toEqual({ kind: 'enter' })
      else expect(listIntent(key, {}), key).toEqual({ kind: meaning[key] })
    }
  })

  test('arrows, pages and ends move; Ctrl-C quits; Esc clears the filter; other keys do nothing', () => {
    expect(listIntent('', { upArrow: true })).toEqual({ kind: 'move', by: -1 })
    expect(listIntent('', { downArrow: true })).toEqual({ kind: 'move', by: 1 })
    expect(listIntent('', { pageDown: true })).toEqual({ kind: 'page', by: 1 })
    expect(listIntent('G', {})).toEqual({ kind: 'edge', to: 'last' })
    expect(listIntent('c', { ctrl: true })).toEqual({ kind: 'quit' })
    expect(listIntent('', { escape: true })).toEqual({ kind: 'clear-filter' })
    expect(listIntent('x', {})).toEqual({ kind: 'none' })
    expect(listIntent('k', { ctrl: true })).toEqual({ kind: 'none' })
  })
})

test('a pager scrolls by lines and pages, jumps to its ends, and q or Esc leave it', () => {
  expect(pagerIntent('', { downArrow: true }, 20)).toEqual({ kind: 'scroll', by: 1 })
  expect(pagerIntent(' ', {}, 20)).toEqual({ kind: 'scroll', by: 20 })
  expect(pagerIntent('', { pageUp: true }, 20)).toEqual({ kind: 'scroll', by: -20 })
  expect(pagerIntent('g', {}, 20)).toEqual({ kind: 'edge', to: 'top' })
  expect(pagerIntent('q', {}, 20)).toEqual({ kind: 'close' })
  expect(pagerIntent('', { escape: true }, 20)).toEqual({ kind: 'close' })
  expect(pagerIntent('x', {}, 20)).toBeNull()
})

test('a text field: typing, a paste without its control characters, backspace, Ctrl-U, Enter, Esc', () => {
  expect(editLine('ye', 's', {})).toEqual({ kind: 'editing', value: 'yes' })
  expect(editLine('', 'tab\there\x1b[A', {})).toEqual({ kind: 'editing', value: 'tabhere[A' })
  // Typed faster than read, or pasted: the piece up to its Enter is submitted.
  expect(editLine('', '1\r', {})).toEqual({ kind: 'submit', value: '1' })
  expect(editLine('a', 'bc\nlater', {})).toEqual({ kind: 'submit', value: 'abc' })
  expect(editLine('yes', '', { backspace: true })).toEqual({ kind: 'editing', value: 'ye' })
  expect(editLine('yes', '', { delete: true })).toEqual({ kind: 'editing', value: 'ye' })
  expect(editLine('日本', '', { backspace: true })).toEqual({ kind: 'editing', value: '日' })
  expect(editLine('yes', 'u', { ctrl: true })).toEqual({ kind: 'editing', value: '' })
  expect(editLine('yes', '', { return: true })).toEqual({ kind: 'submit', value: 'yes' })
  expect(editLine('yes', '', { escape: true })).toEqual({ kind: 'cancel' })
  expect(editLine('yes', '', { leftArrow: true })).toEqual({ kind: 'editing', value: 'yes' })
})

test('a question: y is yes; n, q and Esc are no; anything else asks again', () => {
  expect(confirmIntent('y', {})).toBe('yes')
  expect(confirmIntent('n', {})).toBe('no')
  expect(confirmIntent('', { escape: true })).toBe('no')
  expect(confirmIntent('k', {})).toBeNull()
  expect(confirmIntent('', { return: true })).toBeNull()
})

describe('the new-session form', () => {
  const agents = ['claude', 'codex', 'exec']
  const backends = ['local', 'container']
  const counts = { agents: agents.length, backends: backends.length }

  test('starts on the task with claude, local and detached; Tab and the arrows move; ← → choose', () => {
    let form = newForm(agents)
    expect(formRequest(form, agents, backends)).toEqual({
      agent: 'claude',
      task: '',
      backend: 'local',
      host: 'detached',
    })
    const type = (input: string, key = {}) => {
      const step = formStep(form, input, key, counts)
      if (step.kind !== 'editing') throw new Error(step.kind)
      form = step.form
    }
    for (const char of 'fix it') type(char)
    type('', { tab: true })
    type('', { rightArrow: true })
    type('', { upArrow: true })
    type('', { upArrow: true })
    type('', { leftArrow: true })
    type('', { downArrow: true })
    type('', { downArrow: true })
    type('', { downArrow: true })
    type(' ')
    expect(formRequest(form, agents, backends)).toEqual({
      agent: 'exec',
      task: 'fix it',
      backend: 'container',
      host: 'tmux',
    })
    expect(formStep(form, '', { return: true }, counts)).toEqual({ kind: 'submit', form })
    expect(formStep(form, '', { escape: true }, counts)).toEqual({ kind: 'cancel' })
    const task = { ...form, field: 'task' as const }
    expect(formStep(task, ' now\r', {}, counts)).toEqual({
      kind: 'submit',
      form: { ...task, task: 'fix it now' },
    })
    expect(formLines(form, agents, backends).join('\n')).toContain('runs:     ‹ tmux ›')
  })
})

test('several keys in one piece are each a key of their own, a newline an Enter', () => {
  expect(keyPieces('q', {})).toEqual([['q', {}]])
  expect(keyPieces('', { upArrow: true })).toEqual([['', { upArrow: true }]])
  expect(keyPieces('/ab\r', {})).toEqual([
    ['/', {}],
    ['a', {}],
    ['b', {}],
    ['', { return: true }],
  ])
  expect(keyPieces('日本', {})).toEqual([
    ['日', {}],
    ['本', {}],
  ])
})
