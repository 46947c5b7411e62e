import type { HarnessConfig } from '../../config.js'
import { UsageError } from '../../errors.js'
import { assertTmux, tmuxSessionName, tmuxSocket } from '../../process/tmux.js'
import type { AgentMode } from '../../providers/args.js'
import type { SessionEnv } from '../ports.js'
import type { SessionRecord } from '../record/schema.js'
import type { RunPlan } from './runner.js'

/** How the agent runs: in the background, in the terminal (interactive), or in the foreground without one. */
export function agentMode(ctx: SessionEnv, detach: boolean): RunPlan['mode'] {
  if (detach) return 'background'
  return ctx.interactive ? 'interactive' : 'headless'
}

/** The agent's own form of the mode: a background run is headless to the agent. */
export function invocationMode(mode: RunPlan['mode']): AgentMode {
  return mode === 'interactive' ? 'interactive' : 'headless'
}

/**
 * Whether this run is hosted in tmux: `--tmux`, or config `interactive.host: "tmux"` for a run that would
 * be interactive, or (resume) a session whose last run was hosted in tmux — never with --detach.
 */
export function hostedInTmux(
  ctx: SessionEnv,
  options: { detach: boolean; tmux?: boolean },
  config: HarnessConfig,
  previous?: SessionRecord,
): boolean {
  if (options.tmux && options.detach) {
    throw new UsageError('--tmux and --detach are two different hosts: choose one')
  }
  if (options.tmux !== undefined) return options.tmux
  if (options.detach) return false
  if (previous) return typeof previous.tmux_session === 'string'
  return config.interactive?.host === 'tmux' && agentMode(ctx, false) === 'interactive'
}

/** The tmux server and session of a run hosted in tmux; tmux missing is exit 5, before anything is made. */
export async function tmuxPlace(ctx: SessionEnv, id: string): Promise<{ socket: string; session: string }> {
  assertTmux(ctx.env)
  return { socket: tmuxSocket(ctx.env), session: tmuxSessionName(id) }
}
