import { sha256Hex } from '../../digest.js'

/** `task_hash` of a record: `sha256:` of the prompt as the agent was given it (without a context block). */
export function taskHash(prompt: string): string {
  return `sha256:${sha256Hex(prompt)}`
}

/**
 * `run --session-id <existing>` with a prompt: whether it is another task than the session's (it is then sent
 * as the next message, with a warning). No prompt, or a session without a recorded task, differs from nothing.
 */
export function taskDiffers(recorded: string | null | undefined, prompt: string): boolean {
  if (!prompt || !recorded) return false
  return recorded !== taskHash(prompt)
}
