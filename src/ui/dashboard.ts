import { render } from 'ink'
import { createElement as h } from 'react'
import { App, type Leave, type Memory } from './app.js'
import type { DashboardPort } from './port.js'

/**
 * `harness ui`: the dashboard, drawn by Ink on the alternate screen until the user quits. This module and what it
 * imports are the one chunk of harness that holds Ink and React; only the `ui` command loads it (docs/ui.md).
 */

/**
 * The chunk, once loaded: what the ui command calls. Under node the bundle holds a stand-in for this module whose
 * `loaded()` loads the chunk file itself (scripts/build.mjs), so that the command awaits the loading either way.
 */
export function loaded(): Promise<{ runDashboard: typeof runDashboard }> {
  return Promise.resolve({ runDashboard })
}

/** The terminal the dashboard owns while it runs. */
export interface DashboardTerminal {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
  /** Ends the dashboard from outside (SIGTERM, SIGHUP): it is told how to stop. */
  onStop(stop: () => void): () => void
}

const ENTER = '\x1b[?1049h\x1b[H\x1b[2J'
const LEAVE = '\x1b[?25h\x1b[?1049l'

/**
 * Draws until `q` (or a stop from outside); enter on a tmux session hands the terminal to `tmux attach` and
 * draws again when the user detaches. The terminal is always left as it was found: main screen, cursor shown,
 * no raw mode.
 */
export async function runDashboard(port: DashboardPort, terminal: DashboardTerminal): Promise<void> {
  let memory: Memory = { selectedId: null, filter: '', message: null }
  const write = (text: string) => {
    try {
      terminal.stdout.write(text)
    } catch {}
  }
  write(ENTER)
  try {
    for (;;) {
      const { leave, kept } = await drawUntilLeft(port, terminal, memory)
      memory = kept
      if (leave.kind === 'quit') return
      // tmux gets the terminal as the user left it: main screen, cursor shown, cooked mode (Ink has let go).
      write(LEAVE)
      const result = await port.attach(leave.session)
      memory = {
        ...memory,
        message: result.ok ? { text: result.message, error: false } : { text: result.error, error: true },
      }
      write(ENTER)
    }
  } finally {
    write(LEAVE)
  }
}

/** One stretch of drawing: Ink renders the App until it asks to leave, or a stop from outside ends it. */
async function drawUntilLeft(
  port: DashboardPort,
  terminal: DashboardTerminal,
  memory: Memory,
): Promise<{ leave: Leave; kept: Memory }> {
  let result: { leave: Leave; kept: Memory } = { leave: { kind: 'quit' }, kept: memory }
  const instance = render(
    h(App, {
      port,
      memory,
      onLeave: (leave, kept) => {
        result = { leave, kept }
      },
    }),
    {
      stdin: terminal.stdin,
      stdout: terminal.stdout,
      stderr: terminal.stderr,
      exitOnCtrlC: false,
      patchConsole: false,
    },
  )
  const unsubscribe = terminal.onStop(() => {
    result = { leave: { kind: 'quit' }, kept: result.kept }
    instance.unmount()
  })
  try {
    await instance.waitUntilExit()
  } finally {
    unsubscribe()
  }
  return result
}
