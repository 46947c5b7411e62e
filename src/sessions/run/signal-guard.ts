import { ExitRequest } from '../../errors.js'
import { signalExitCode } from '../record/outcome.js'

/** The stop signals received while a run is being set up, and an abort signal for the set-up's steps. */
export interface SignalGuard {
  signal: AbortSignal
  received: () => NodeJS.Signals | null
  dispose: () => void
}

/** harness ends by the signal it received, as if it had not caught it (130 for SIGINT, 143 for SIGTERM). */
export function signalExit(signal: NodeJS.Signals): ExitRequest {
  return new ExitRequest(signalExitCode(signal) ?? 130, signal)
}

export function throwIfSignalled(guard: SignalGuard): void {
  const received = guard.received()
  if (received) throw signalExit(received)
}

/** Ctrl-C (or Ctrl-\, SIGTERM, SIGHUP) before the agent starts: abort the set-up and undo it. */
export function abortOnSignals(): SignalGuard {
  const controller = new AbortController()
  let received: NodeJS.Signals | null = null
  let disposed = false
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const).map((sig) => {
    const handler = () => {
      received ??= sig
      controller.abort()
    }
    process.on(sig, handler)
    return [sig, handler] as const
  })
  return {
    signal: controller.signal,
    received: () => received,
    dispose: () => {
      if (disposed) return
      disposed = true
      for (const [sig, handler] of handlers) process.removeListener(sig, handler)
    },
  }
}
