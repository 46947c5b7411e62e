import { IllegalStateError, UsageError } from '../../errors.js'
import { attachTmuxSession, hasTmuxSession, tmuxSocket } from '../../process/tmux.js'
import { readerOf, refuseWhileRunning } from '../backends/index.js'
import type { SessionEnv } from '../ports.js'
import { getSession } from '../query/query.js'
import type { SessionView } from '../query/reconcile.js'
import type { SessionRecord } from '../record/schema.js'
import { type VerifiedSession, verifiedSession } from '../record/seal.js'

/** The tmux server and session a verified record names: a foreign one's socket is never connected to. */
function tmuxTarget(
  session: VerifiedSession<SessionRecord>,
  env: NodeJS.ProcessEnv,
  defaultSocket: (env: NodeJS.ProcessEnv) => string,
): { socket: string; name: string | null } {
  return {
    socket: session.tmux_socket ?? defaultSocket(env),
    name: typeof session.tmux_session === 'string' ? session.tmux_session : null,
  }
}

/**
 * `session attach`: this terminal shows the session's tmux session until the user detaches (the tmux prefix,
 * Ctrl-b by default, then d) or the agent ends (docs/tmux.md).
 */
export async function attachSession(ctx: SessionEnv, input: string): Promise<SessionView> {
  const session = await getSession(ctx, input)
  // The record names the tmux socket: only one harness sealed here is attached to (docs/security.md,
  // "Verified records").
  const verified = verifiedSession(session, 'attaches to the tmux server it names')
  const id = session.id
  if (session.status === 'RUNNING') refuseWhileRunning(await readerOf(session), 'attach')
  const name = session.tmux_session
  if (typeof name !== 'string') {
    throw new IllegalStateError(
      `session "${id}" is not hosted in tmux`,
      `start interactive agents with "harness run --tmux" to attach to them later`,
      'NOT_IN_TMUX',
    )
  }
  if (session.status !== 'RUNNING') {
    throw new IllegalStateError(
      `session "${id}" is ${session.status}, not running`,
      `resume it into a new tmux session: "harness session resume ${id}"`,
      'SESSION_NOT_RUNNING',
    )
  }
  if (!ctx.stdinIsTerminal) throw new UsageError('session attach needs a terminal on stdin')
  const { socket } = tmuxTarget(verified, ctx.env, tmuxSocket)
  if (!(await hasTmuxSession(socket, name, ctx.env))) {
    throw new IllegalStateError(
      `the tmux session "${name}" of session "${id}" is gone`,
      `see "harness session show ${id}"`,
      'TMUX_SESSION_GONE',
    )
  }
  await attachTmuxSession(socket, name, ctx.env)
  return (await getSession(ctx, id)) as SessionView
}
