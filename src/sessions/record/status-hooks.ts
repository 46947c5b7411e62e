import { join } from 'node:path'
import type { SessionRecord } from './schema.js'

/** What `hooks.on_status` is told about one change (docs/tmux.md). */
export interface StatusChange {
  id: string
  status: string
  previousStatus: string
  state: string
  previousState: string
}

/** The state shown for a record: only a running one has one. */
function stateOf(record: SessionRecord | null): string {
  return record?.status === 'RUNNING' && typeof record.state === 'string' ? record.state : ''
}

/** The change a write made to a session's status or state, if any. Pure. */
export function statusChange(before: SessionRecord | null, after: SessionRecord): StatusChange | null {
  const previousStatus = before?.status ?? ''
  const previousState = stateOf(before)
  const state = stateOf(after)
  if (previousStatus === after.status && previousState === state) return null
  return { id: after.id, status: after.status, previousStatus, state, previousState }
}

/** The environment of a hook run. */
export function hookEnv(change: StatusChange): Record<string, string> {
  return {
    HARNESS_SESSION_ID: change.id,
    HARNESS_STATUS: change.status,
    HARNESS_PREVIOUS_STATUS: change.previousStatus,
    HARNESS_STATE: change.state,
    HARNESS_PREVIOUS_STATE: change.previousState,
  }
}

export type RecordObserver = (before: SessionRecord | null, after: SessionRecord) => void

/**
 * A store observer that runs `hooks.on_status` for each change of status or state. Every write happens in
 * exactly one process, so each change runs the hook exactly once, from whichever process made it (a
 * supervisor, or a command that reconciled or stopped a session).
 */
export function statusHookObserver(
  argv: readonly string[] | null | undefined | (() => Promise<readonly string[] | null | undefined>),
  logsDir: string,
  /** Harness's environment, which the hook gets with the change's variables added. */
  env: NodeJS.ProcessEnv,
  /** A background supervisor waits for its hooks up to their deadline; anyone else a few seconds. */
  waitsForHooks = false,
): RecordObserver {
  // One at a time, in the order of the changes: a hook that appends to a file sees them in order.
  let queue: Promise<void> = Promise.resolve()
  let loaded: Promise<readonly string[] | null | undefined> | undefined
  const command = () => {
    loaded ??= typeof argv === 'function' ? argv() : Promise.resolve(argv)
    return loaded
  }
  return (before, after) => {
    const change = statusChange(before, after)
    if (!change) return
    queue = queue.then(async () => {
      const hook = await command()
      if (!hook?.length) return
      const { runHook, HOOK_DEADLINE_MS, HOOK_PATIENCE_MS } = await import('../../process/hooks.js')
      const limits = {
        patienceMs: waitsForHooks ? HOOK_DEADLINE_MS : HOOK_PATIENCE_MS,
        deadlineMs: HOOK_DEADLINE_MS,
      }
      await runHook(hook, hookEnv(change), join(logsDir, `${change.id}.log`), env, limits)
    })
  }
}
