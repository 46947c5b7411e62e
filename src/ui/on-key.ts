import type { Message } from './frame.js'
import { pagerRows } from './frame.js'
import {
  confirmIntent,
  editLine,
  type FormStep,
  formRequest,
  formStep,
  type KeyPress,
  listIntent,
  type NewForm,
  newForm,
  pagerIntent,
} from './keys.js'
import type { ActionResult, DashboardPort, DashboardSession } from './port.js'
import { layout, type Size } from './view.js'

// What the keys do on each screen of the dashboard: keys.ts says what a key means, this carries it out through
// the port and the dashboard's state.

/** Why the dashboard stops drawing: to quit, or to hand the terminal to `tmux attach`. */
export type Leave = { kind: 'quit' } | { kind: 'attach'; session: DashboardSession }

export type Screen =
  | { kind: 'list' }
  | { kind: 'help' }
  | { kind: 'filter'; value: string; before: string }
  | { kind: 'send'; session: DashboardSession; value: string }
  | { kind: 'confirm'; title: string; lines: string[]; offset: number; question: string; yes: () => void }
  | { kind: 'new'; form: NewForm }
  | { kind: 'pager'; title: string; lines: string[]; offset: number; follow: DashboardSession | null }

/** What a key handler may read and change. */
export interface Keys {
  port: DashboardPort
  session: DashboardSession | undefined
  shown: DashboardSession[]
  selected: number
  size: Size
  setSelectedId(id: string | null): void
  setScreen(screen: Screen): void
  setFilter(filter: string): void
  setMessage(message: Message | null): void
  act(label: string, work: () => Promise<ActionResult>): void
  leave(how: Leave): void
}

export function onKey(screen: Screen, k: Keys, input: string, key: KeyPress, filter: string): void {
  switch (screen.kind) {
    case 'list':
      onListKey(k, input, key, filter)
      return
    case 'help':
      k.setScreen({ kind: 'list' })
      return
    case 'filter': {
      const edit = editLine(screen.value, input, key)
      if (edit.kind === 'editing') {
        k.setScreen({ ...screen, value: edit.value })
        return
      }
      if (edit.kind === 'submit') k.setFilter(edit.value.trim())
      k.setScreen({ kind: 'list' })
      return
    }
    case 'send': {
      const edit = editLine(screen.value, input, key)
      if (edit.kind === 'editing') {
        k.setScreen({ ...screen, value: edit.value })
        return
      }
      k.setScreen({ kind: 'list' })
      if (edit.kind === 'submit') {
        const target = screen.session
        k.act(`sending to ${target.id}`, () => k.port.send(target, edit.value))
      }
      return
    }
    case 'confirm':
      onConfirmKey(screen, k, input, key)
      return
    case 'new':
      onFormKey(screen.form, k, input, key)
      return
    case 'pager': {
      const intent = pagerIntent(input, key, pagerRows(k.size))
      if (!intent) return
      if (intent.kind === 'close') {
        k.setScreen({ kind: 'list' })
        return
      }
      const rows = pagerRows(k.size)
      const last = Math.max(0, screen.lines.length - rows)
      const offset =
        intent.kind === 'edge'
          ? intent.to === 'top'
            ? 0
            : last
          : Math.max(0, Math.min(last, screen.offset + intent.by))
      k.setScreen({ ...screen, offset })
      return
    }
  }
}

function onListKey(k: Keys, input: string, key: KeyPress, filter: string): void {
  const intent = listIntent(input, key)
  const move = (to: number) => {
    const next = k.shown[Math.max(0, Math.min(k.shown.length - 1, to))]
    if (next) k.setSelectedId(next.id)
  }
  const page = Math.max(1, layout(k.size).listRows - 1)
  const s = k.session
  switch (intent.kind) {
    case 'move':
      move(k.selected + intent.by)
      return
    case 'page':
      move(k.selected + intent.by * page)
      return
    case 'edge':
      move(intent.to === 'first' ? 0 : k.shown.length - 1)
      return
    case 'quit':
      k.leave({ kind: 'quit' })
      return
    case 'help':
      k.setScreen({ kind: 'help' })
      return
    case 'filter':
      k.setScreen({ kind: 'filter', value: filter, before: filter })
      return
    case 'clear-filter':
      k.setFilter('')
      k.setMessage(null)
      return
    case 'new':
      k.setMessage(null)
      k.setScreen({ kind: 'new', form: newForm(k.port.agents) })
      return
    case 'none':
      return
  }
  if (!s) {
    k.setMessage({ text: 'No session selected: n starts one.', error: true })
    return
  }
  onSessionKey(intent.kind, s, k)
}

/** What each key does to the selected session. */
const SESSION_KEYS: Record<string, (s: DashboardSession, k: Keys) => void> = {
  enter(s, k) {
    if (s.tmux && s.statusCode === 'RUNNING') k.leave({ kind: 'attach', session: s })
    else openLog(k, s, true)
  },
  logs: (s, k) => openLog(k, s, false),
  send: (s, k) => k.setScreen({ kind: 'send', session: s, value: '' }),
  diff(s, k) {
    k.act(`diff of ${s.id}`, async () => {
      const diff = await k.port.diff(s)
      if (!diff.ok) return diff
      k.setScreen({ kind: 'pager', title: diff.title, lines: diff.lines, offset: 0, follow: null })
      return { ok: true, message: '' }
    })
  },
  kill(s, k) {
    k.setScreen({
      kind: 'confirm',
      title: `kill ${s.id}`,
      lines: [],
      offset: 0,
      question: `kill session ${s.id} and everything it started? y/n`,
      yes: () => k.act(`killing ${s.id}`, () => k.port.stop(s, 'kill')),
    })
  },
  pause: (s, k) => k.act(`pausing ${s.id}`, () => k.port.stop(s, 'pause')),
  resume: (s, k) => k.act(`resuming ${s.id}`, () => k.port.resume(s)),
  merge(s, k) {
    k.act(`merge of ${s.id}: dry run`, async () => {
      const preview = await k.port.mergePreview(s)
      if (!preview.ok) return preview
      const title = `merge ${s.id}: dry run`
      if (!preview.canMerge) {
        k.setScreen({ kind: 'pager', title, lines: preview.lines, offset: 0, follow: null })
        return { ok: false, error: `harness: session ${s.id} cannot be merged now (see the dry run)` }
      }
      k.setScreen({
        kind: 'confirm',
        title,
        lines: preview.lines,
        offset: 0,
        question: `merge session ${s.id} as shown? y/n`,
        yes: () => k.act(`merging ${s.id}`, () => k.port.merge(s)),
      })
      return { ok: true, message: '' }
    })
  },
}

function onSessionKey(kind: string, s: DashboardSession, k: Keys): void {
  SESSION_KEYS[kind]?.(s, k)
}

function openLog(k: Keys, s: DashboardSession, follow: boolean): void {
  k.act(`log of ${s.id}`, async () => {
    const log = await k.port.log(s, 2000)
    if (!log.ok) return log
    const rows = pagerRows(k.size)
    k.setScreen({
      kind: 'pager',
      title: `${follow && log.running ? 'following the log' : 'log'} of ${s.id}`,
      lines: log.lines,
      offset: Math.max(0, log.lines.length - rows),
      follow: follow && log.running ? s : null,
    })
    return { ok: true, message: '' }
  })
}

function onConfirmKey(
  screen: Extract<Screen, { kind: 'confirm' }>,
  k: Keys,
  input: string,
  key: KeyPress,
): void {
  const answer = confirmIntent(input, key)
  if (answer === null) {
    const intent = pagerIntent(input, key, pagerRows(k.size))
    if (intent?.kind === 'scroll') {
      const last = Math.max(0, screen.lines.length - pagerRows(k.size))
      k.setScreen({ ...screen, offset: Math.max(0, Math.min(last, screen.offset + intent.by)) })
    }
    return
  }
  k.setScreen({ kind: 'list' })
  if (answer === 'yes') screen.yes()
  else k.setMessage({ text: `${screen.title}: not done`, error: false })
}

function onFormKey(form: NewForm, k: Keys, input: string, key: KeyPress): void {
  const step: FormStep = formStep(form, input, key, {
    agents: k.port.agents.length,
    backends: k.port.backends.length,
  })
  if (step.kind === 'cancel') {
    k.setScreen({ kind: 'list' })
    return
  }
  if (step.kind === 'editing') {
    k.setScreen({ kind: 'new', form: step.form })
    return
  }
  const request = formRequest(step.form, k.port.agents, k.port.backends)
  if (!request.task) {
    k.setMessage({ text: 'harness: the new session needs a task', error: true })
    k.setScreen({ kind: 'new', form: { ...step.form, field: 'task' } })
    return
  }
  k.setScreen({ kind: 'list' })
  k.act(`starting ${request.agent}`, () => k.port.start(request))
}
