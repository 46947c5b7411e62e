import { IllegalStateError, UsageError } from '../../errors.js'
import { hasTmuxSession, sendLine, tmuxSocket } from '../../process/tmux.js'
import { readerOf, refuseWhileRunning } from '../backends/index.js'
import type { SessionEnv } from '../ports.js'
import { getSession } from '../query/query.js'
import { verifiedSession } from '../record/seal.js'

export interface SendResult {
  id: string
  /** The tmux session the line was typed into. */
  tmux_session: string
  text: string
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/**
 * `session send <id> <text>`: types `text` into the interactive agent of a RUNNING session hosted in tmux, then
 * Enter, as the user would at its prompt (docs/tmux.md). The text goes as it is, never as key names; a control
 * character (a newline, an escape, Ctrl-C) could do anything in the agent's terminal, so it is a usage error
 * (exit 2). Any other session — not in tmux, not running, foreign, or not verifiably alive — is exit 4.
 */
export async function sendToSession(ctx: SessionEnv, input: string, text: string): Promise<SendResult> {
  const control = CONTROL.exec(text)
  if (control) {
    const code = (control[0].codePointAt(0) ?? 0).toString(16).padStart(2, '0')
    throw new UsageError(
      `the text holds a control character (\\x${code}): session send types one line of plain text`,
      'send each line on its own; an agent that needs a key (Esc, Ctrl-C) is answered with "harness session attach"',
      'CONTROL_CHARACTER',
    )
  }
  const session = await getSession(ctx, input)
  const id = session.id
  // The record names the tmux server: only one harness sealed here is typed into (docs/security.md).
  const verified = verifiedSession(session, 'types into the tmux session it names')
  if (session.status === 'RUNNING') refuseWhileRunning(await readerOf(session), 'send')
  const name = verified.tmux_session
  if (typeof name !== 'string') {
    throw new IllegalStateError(
      `session "${id}" is not hosted in tmux: there is no terminal to type into`,
      'start interactive agents with "harness run --tmux" to answer them with session send',
      'NOT_IN_TMUX',
    )
  }
  if (session.status !== 'RUNNING' || (session.liveness && session.liveness !== 'running')) {
    throw new IllegalStateError(
      `session "${id}" is ${session.status}${session.liveness && session.liveness !== 'running' ? ` (${session.liveness})` : ''}, not running`,
      session.status === 'RUNNING'
        ? `see "harness session show ${id}"`
        : `resume it first: "harness session resume ${id}"`,
      'SESSION_NOT_RUNNING',
    )
  }
  const socket = verified.tmux_socket ?? tmuxSocket(ctx.env)
  if (!(await hasTmuxSession(socket, name, ctx.env))) {
    throw new IllegalStateError(
      `the tmux session "${name}" of session "${id}" is gone`,
      `see "harness session show ${id}"`,
      'TMUX_SESSION_GONE',
    )
  }
  await sendLine(socket, name, text, ctx.env)
  return { id, tmux_session: name, text }
}
