import { join } from 'node:path'
import { ensureDir, lstatOrNull, removeHeldSync } from '../../disk/door.js'
import { IllegalStateError } from '../../errors.js'

/** `.harness/agents/`: files harness owns for the agents of sessions (docs/providers.md). */
function agentsRoot(harnessDir: string): string {
  return join(harnessDir, 'agents')
}

/** `.harness/agents/<id>/`: pi's conversation file, aider's chat history. Goes with the session. */
export function agentDirFor(harnessDir: string, id: string): string {
  return join(agentsRoot(harnessDir), id)
}

/**
 * Makes the session's agent folder (0700, like every folder of harness: conversations hold secrets).
 * `fresh`: a new session; a folder left by a removed session of the same id is emptied, so that the new
 * agent never continues someone else's conversation.
 */
export function ensureAgentDir(harnessDir: string, id: string, fresh: boolean): string {
  const root = agentsRoot(harnessDir)
  ensureDir(root)
  assertRealDir(root)
  const dir = agentDirFor(harnessDir, id)
  if (fresh) removeAgentDir(harnessDir, id)
  ensureDir(dir)
  assertRealDir(dir)
  return dir
}

/** Removes the session's agent folder, if any; a symlink in its place is removed, never followed. */
export function removeAgentDir(harnessDir: string, id: string): void {
  removeHeldSync(agentDirFor(harnessDir, id))
}

/** harness's own folders are never symlinks: a link planted there could send agent files anywhere. */
function assertRealDir(path: string): void {
  const stat = lstatOrNull(path)
  if (!stat?.isDirectory()) {
    throw new IllegalStateError(
      `${path} is not a plain folder`,
      'harness keeps per-agent files there; move it away',
      'UNSAFE_PATH',
    )
  }
}
