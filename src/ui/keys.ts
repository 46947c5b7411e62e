import type { NewSession } from './port.js'

// What a key press means on each of the dashboard's screens, as pure functions: the components only pass the
// keys in and carry the result out.

/** The key facts the dashboard reads (a subset of Ink's `Key`). */
export interface KeyPress {
  upArrow?: boolean
  downArrow?: boolean
  leftArrow?: boolean
  rightArrow?: boolean
  pageUp?: boolean
  pageDown?: boolean
  home?: boolean
  end?: boolean
  return?: boolean
  escape?: boolean
  ctrl?: boolean
  shift?: boolean
  tab?: boolean
  backspace?: boolean
  delete?: boolean
  meta?: boolean
}

export type ListIntent =
  | { kind: 'move'; by: number }
  | { kind: 'page'; by: -1 | 1 }
  | { kind: 'edge'; to: 'first' | 'last' }
  | {
      kind:
        | 'enter'
        | 'send'
        | 'diff'
        | 'logs'
        | 'kill'
        | 'pause'
        | 'resume'
        | 'merge'
        | 'new'
        | 'filter'
        | 'clear-filter'
        | 'help'
        | 'quit'
    }
  | { kind: 'none' }

const LETTERS: Record<string, ListIntent['kind']> = {
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

/** A key on the list. */
export function listIntent(input: string, key: KeyPress): ListIntent {
  if (key.ctrl && input === 'c') return { kind: 'quit' }
  if (key.upArrow) return { kind: 'move', by: -1 }
  if (key.downArrow) return { kind: 'move', by: 1 }
  if (key.pageUp) return { kind: 'page', by: -1 }
  if (key.pageDown) return { kind: 'page', by: 1 }
  if (key.home) return { kind: 'edge', to: 'first' }
  if (key.end) return { kind: 'edge', to: 'last' }
  if (key.return) return { kind: 'enter' }
  if (key.escape) return { kind: 'clear-filter' }
  if (key.ctrl || key.meta) return { kind: 'none' }
  if (input === 'g') return { kind: 'edge', to: 'first' }
  if (input === 'G') return { kind: 'edge', to: 'last' }
  const kind = LETTERS[input]
  return kind ? ({ kind } as ListIntent) : { kind: 'none' }
}

/** A key in a pager (a diff, a log): scroll, or leave. */
export type PagerIntent =
  | { kind: 'scroll'; by: number }
  | { kind: 'edge'; to: 'top' | 'bottom' }
  | { kind: 'close' }

export function pagerIntent(input: string, key: KeyPress, page: number): PagerIntent | null {
  if (key.escape || input === 'q' || (key.ctrl && input === 'c')) return { kind: 'close' }
  if (key.upArrow || input === 'k') return { kind: 'scroll', by: -1 }
  if (key.downArrow || input === 'j' || key.return) return { kind: 'scroll', by: 1 }
  if (key.pageUp || input === 'b') return { kind: 'scroll', by: -Math.max(1, page) }
  if (key.pageDown || input === ' ' || input === 'f') return { kind: 'scroll', by: Math.max(1, page) }
  if (key.home || input === 'g') return { kind: 'edge', to: 'top' }
  if (key.end || input === 'G') return { kind: 'edge', to: 'bottom' }
  return null
}

/** A one-line text field after a key: still editing, submitted, or cancelled. */
export type Edit = { kind: 'editing'; value: string } | { kind: 'submit'; value: string } | { kind: 'cancel' }

/** Printable text only: a paste's newlines and control characters are not typed into a field. */
function printable(input: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping control characters is the point
  return input.replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
}

export function editLine(value: string, input: string, key: KeyPress): Edit {
  if (key.escape || (key.ctrl && input === 'c')) return { kind: 'cancel' }
  if (key.return) return { kind: 'submit', value }
  if (key.backspace || key.delete) return { kind: 'editing', value: [...value].slice(0, -1).join('') }
  if (key.ctrl && input === 'u') return { kind: 'editing', value: '' }
  // A line typed faster than it is read (or pasted) comes as one piece with its Enter: the line is submitted.
  const end = input.search(/[\r\n]/)
  if (end >= 0) return { kind: 'submit', value: value + printable(input.slice(0, end)) }
  if (key.ctrl || key.meta || key.tab || key.upArrow || key.downArrow || key.leftArrow || key.rightArrow) {
    return { kind: 'editing', value }
  }
  return { kind: 'editing', value: value + printable(input) }
}

/** A yes/no question: y answers yes; n, Esc or q no; anything else asks again. */
export function confirmIntent(input: string, key: KeyPress): 'yes' | 'no' | null {
  if (input === 'y' || input === 'Y') return 'yes'
  if (input === 'n' || input === 'N' || input === 'q' || key.escape || (key.ctrl && input === 'c'))
    return 'no'
  return null
}

/** The `n` form: one field at a time; Tab and the arrows move, ← → choose, Enter starts, Esc cancels. */
export interface NewForm {
  field: 'agent' | 'task' | 'backend' | 'host'
  agent: number
  task: string
  backend: number
  host: number
}

const FORM_FIELDS: NewForm['field'][] = ['agent', 'task', 'backend', 'host']
const HOSTS: NewSession['host'][] = ['detached', 'tmux']

export function newForm(agents: string[], preferred = 'claude'): NewForm {
  return { field: 'task', agent: Math.max(0, agents.indexOf(preferred)), task: '', backend: 0, host: 0 }
}

export type FormStep =
  | { kind: 'editing'; form: NewForm }
  | { kind: 'submit'; form: NewForm }
  | { kind: 'cancel' }

export function formStep(
  form: NewForm,
  input: string,
  key: KeyPress,
  counts: { agents: number; backends: number },
): FormStep {
  if (key.escape || (key.ctrl && input === 'c')) return { kind: 'cancel' }
  if (key.return) return { kind: 'submit', form }
  if (form.field === 'task' && /[\r\n]/.test(input)) {
    const edit = editLine(form.task, input, key)
    if (edit.kind === 'submit') return { kind: 'submit', form: { ...form, task: edit.value } }
  }
  const at = FORM_FIELDS.indexOf(form.field)
  if (key.tab || key.downArrow || key.upArrow) {
    const by = key.upArrow || (key.tab && key.shift) ? -1 : 1
    const field = FORM_FIELDS[(at + by + FORM_FIELDS.length) % FORM_FIELDS.length] as NewForm['field']
    return { kind: 'editing', form: { ...form, field } }
  }
  if (form.field === 'task') {
    const edit = editLine(form.task, input, key)
    return { kind: 'editing', form: { ...form, task: edit.kind === 'editing' ? edit.value : form.task } }
  }
  const by = key.leftArrow ? -1 : key.rightArrow || input === ' ' ? 1 : 0
  if (by === 0) return { kind: 'editing', form }
  const count =
    form.field === 'agent' ? counts.agents : form.field === 'backend' ? counts.backends : HOSTS.length
  const cycle = (n: number) => (count > 0 ? (n + by + count) % count : 0)
  return { kind: 'editing', form: { ...form, [form.field]: cycle(form[form.field]) } }
}

/** The form's answer. */
export function formRequest(form: NewForm, agents: string[], backends: string[]): NewSession {
  return {
    agent: agents[form.agent] ?? agents[0] ?? 'claude',
    task: form.task.trim(),
    backend: backends[form.backend] ?? 'local',
    host: HOSTS[form.host] ?? 'detached',
  }
}

/** The form's lines, the field being edited marked. */
export function formLines(form: NewForm, agents: string[], backends: string[]): string[] {
  const mark = (field: NewForm['field']) => (form.field === field ? '› ' : '  ')
  const choice = (values: string[], at: number) => `‹ ${values[at] ?? '-'} ›`
  return [
    'New session (Tab or ↑ ↓: field · ← →: choose · Enter: start · Esc: cancel)',
    '',
    `${mark('agent')}agent:    ${choice(agents, form.agent)}`,
    `${mark('task')}task:     ${form.task}${form.field === 'task' ? '▏' : ''}`,
    `${mark('backend')}backend:  ${choice(backends, form.backend)}`,
    `${mark('host')}runs:     ${choice(HOSTS, form.host)}`,
  ]
}

/**
 * A piece of input as the keys it holds: one key as it came, or, for plain text of several characters (typed
 * faster than it was read, or pasted), each character a key of its own, a newline as Enter.
 */
export function keyPieces(input: string, key: KeyPress): [string, KeyPress][] {
  const chars = [...input]
  const plain = !Object.entries(key).some(([name, on]) => on && name !== 'shift')
  if (chars.length <= 1 || !plain) return [[input, key]]
  return chars.map((char) => (char === '\r' || char === '\n' ? ['', { return: true }] : [char, {}]))
}
