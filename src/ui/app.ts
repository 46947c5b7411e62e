import { Box, Text, useApp, useInput } from 'ink'
import { createElement as h, type ReactElement, useRef, useState } from 'react'
import { formFrame, helpFrame, type Line, listFrame, type Message, pagerFrame } from './frame.js'
import { useDetail, useFollow, useListing, useSize, useTick } from './hooks.js'
import { formLines, type KeyPress, keyPieces } from './keys.js'
import { type Keys, type Leave, onKey, type Screen } from './on-key.js'
import type { ActionResult, DashboardDetail, DashboardPort, DashboardSession, Listing } from './port.js'
import { filterSessions, layout, type Size } from './view.js'

export type { Leave }

// The dashboard's components: state, keys and timers. What is drawn comes from frame.ts, what a key means from
// keys.ts, and what an action does from the port; nothing here decides any of it.

/** What the dashboard keeps while it is away (attached to a session) and shows again when it comes back. */
export interface Memory {
  selectedId: string | null
  filter: string
  message: Message | null
}

export interface AppProps {
  port: DashboardPort
  memory: Memory
  /** Told once, when the dashboard stops drawing, with what it keeps. */
  onLeave(leave: Leave, memory: Memory): void
}

/** The dashboard's own state. Kept in a ref and changed in place, so that keys typed faster than a frame is drawn
 * (a paste, a held arrow) each see what the key before them did. */
interface UiState {
  screen: Screen
  filter: string
  selectedId: string | null
  message: Message | null
  busy: string | null
}

/** The sessions shown (the filter applied, also while it is being typed) and the selected one. */
function derive(ui: UiState, listing: Listing | null) {
  const all = listing?.sessions ?? []
  const shown = filterSessions(all, ui.screen.kind === 'filter' ? ui.screen.value : ui.filter)
  const selected = Math.max(
    shown.findIndex((s) => s.id === ui.selectedId),
    0,
  )
  return { all, shown, selected, session: shown[selected] }
}

export function App({ port, memory, onLeave }: AppProps): ReactElement {
  const { exit } = useApp()
  const size = useSize()
  const now = useTick(1000)
  const { listing, reload } = useListing(port)
  const ui = useRef<UiState>({ screen: { kind: 'list' }, busy: null, ...memory })
  const [, redraw] = useState(0)
  const update = (patch: Partial<UiState>) => {
    ui.current = { ...ui.current, ...patch }
    redraw((n) => n + 1)
  }
  const latest = useRef({ listing, size })
  latest.current = { listing, size }
  const start = useRef(0)
  /** Once the dashboard has asked to leave, later keys of the same piece are not its. */
  const left = useRef(false)
  const view = derive(ui.current, listing)
  const detail = useDetail(port, view.session, size.columns, listing, layout(size).detailRows > 0)
  useFollow(
    port,
    () => ui.current.screen,
    (screen) => update({ screen }),
  )

  const act = (label: string, work: () => Promise<ActionResult>) => {
    if (ui.current.busy) {
      update({ message: { text: `still busy: ${ui.current.busy}`, error: true } })
      return
    }
    update({ busy: label, message: { text: `${label}…`, error: false } })
    work()
      .then(
        (r) => update({ message: r.ok ? { text: r.message, error: false } : { text: r.error, error: true } }),
        (e: unknown) => update({ message: { text: `harness: ${String(e)}`, error: true } }),
      )
      .finally(() => {
        update({ busy: null })
        reload()
      })
  }
  const press = (input: string, key: KeyPress) => {
    if (left.current) return
    const current = derive(ui.current, latest.current.listing)
    const keys: Keys = {
      port,
      ...current,
      size: latest.current.size,
      setSelectedId: (selectedId) => update({ selectedId }),
      setScreen: (screen) => update({ screen }),
      setFilter: (filter) => update({ filter }),
      setMessage: (message) => update({ message }),
      act,
      leave(how) {
        const { filter, message } = ui.current
        left.current = true
        onLeave(how, { selectedId: current.session?.id ?? null, filter, message })
        exit()
      },
    }
    onKey(ui.current.screen, keys, input, key, ui.current.filter)
  }
  // Keys typed faster than they are read arrive as one piece ("/3f9a" and its Enter): each is its own key,
  // on the screen the key before it left.
  useInput((input, key) => {
    for (const [piece, as] of keyPieces(input, key)) press(piece, as)
  })

  const lines = drawScreen(ui.current.screen, {
    port,
    size,
    ...view,
    filter: ui.current.filter,
    detail,
    message: ui.current.message,
    listing,
    now,
    start,
  })
  return h(Box, { flexDirection: 'column' }, ...lines.map((line, i) => drawLine(line, i, port.color)))
}
interface DrawState {
  port: DashboardPort
  size: Size
  all: DashboardSession[]
  shown: DashboardSession[]
  selected: number
  filter: string
  detail: DashboardDetail | undefined
  message: Message | null
  listing: Listing | null
  now: Date
  start: { current: number }
}

function drawScreen(screen: Screen, d: DrawState): Line[] {
  switch (screen.kind) {
    case 'help':
      return helpFrame(d.size)
    case 'pager':
      return pagerFrame({
        size: d.size,
        title: screen.title,
        lines: screen.lines,
        offset: screen.offset,
        following: screen.follow !== null,
      })
    case 'confirm':
      if (screen.lines.length) {
        return pagerFrame({
          size: d.size,
          title: screen.title,
          lines: screen.lines,
          offset: screen.offset,
          question: screen.question,
        })
      }
      break
    case 'new':
      return formFrame(d.size, formLines(screen.form, d.port.agents, d.port.backends), d.message)
  }
  const prompt =
    screen.kind === 'filter'
      ? `/${screen.value}▏`
      : screen.kind === 'send'
        ? `send to ${screen.session.id}: ${screen.value}▏`
        : screen.kind === 'confirm'
          ? screen.question
          : null
  const frame = listFrame({
    size: d.size,
    title: d.port.title,
    all: d.all,
    shown: d.shown,
    selected: d.selected,
    start: d.start.current,
    filter: screen.kind === 'filter' ? screen.value : d.filter,
    detail: d.detail,
    message: d.message,
    prompt,
    loaded: d.listing !== null,
    now: d.now,
  })
  d.start.current = frame.start
  return frame.lines
}

function drawLine(line: Line, i: number, color: boolean): ReactElement {
  // An empty Text takes no row: a blank line is a space.
  if (line.every((s) => s.text === '')) return h(Text, { key: i }, ' ')
  return h(
    Text,
    { key: i, wrap: 'truncate-end' },
    ...line.map((s, j) =>
      h(
        Text,
        {
          key: j,
          ...(color && s.colour ? { color: s.colour } : {}),
          ...(s.bold ? { bold: true } : {}),
          ...(s.inverse && color ? { inverse: true } : {}),
        },
        s.text,
      ),
    ),
  )
}
