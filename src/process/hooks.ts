import { spawn } from 'node:child_process'
import { dirname } from 'node:path'
import { appendText, ensureDir } from '../disk/door.js'

/**
 * How long a hook may run (docs/security.md, "Deadlines"): then its process group is killed, by the process that
 * ran it if that still runs.
 */
export const HOOK_DEADLINE_MS = 60_000

/** How long a short-lived command (kill, list) keeps running for a hook before leaving it to finish alone. */
export const HOOK_PATIENCE_MS = 5000

/**
 * Runs a hook command (an argv, never through a shell, in a process group of its own) with `env` added to
 * harness's environment. A hook never fails harness: a command that cannot start, exits non-zero or runs past
 * `deadlineMs` (killed then, with its group) is noted in `logPath` (the session's log). The returned promise
 * resolves when the hook has ended, or after `patienceMs`: a short-lived command does not wait longer, and
 * then enforces the deadline only while it still runs itself.
 */
export function runHook(
  argv: readonly string[],
  env: Record<string, string>,
  logPath: string,
  baseEnv: NodeJS.ProcessEnv,
  limits: { patienceMs: number; deadlineMs: number },
): Promise<void> {
  const [command, ...args] = argv
  if (!command) return Promise.resolve()
  const note = (message: string) => {
    try {
      // Through the door: a log shipped as a link (or a FIFO) is refused, never appended through.
      ensureDir(dirname(logPath))
      appendText(logPath, `\n[harness] hooks.on_status (${command}) ${message}\n`)
    } catch {}
  }
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>
    try {
      child = spawn(command, args, {
        env: { ...baseEnv, ...env },
        stdio: 'ignore',
        detached: true,
      })
    } catch (error) {
      note(`could not start: ${(error as Error).message}`)
      resolve()
      return
    }
    let killedAtDeadline = false
    const deadline = setTimeout(() => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
      killedAtDeadline = true
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
    }, limits.deadlineMs)
    const patience = setTimeout(() => {
      // Leave it: neither it nor its deadline keeps this process alive any longer.
      child.unref()
      deadline.unref()
      resolve()
    }, limits.patienceMs)
    const done = () => {
      clearTimeout(deadline)
      clearTimeout(patience)
      resolve()
    }
    child.on('error', (error) => {
      note(`could not start: ${error.message}`)
      done()
    })
    child.on('exit', (code, signal) => {
      if (killedAtDeadline) note(`killed after ${limits.deadlineMs / 1000} s (its deadline)`)
      else if (code !== 0) note(signal ? `ended by ${signal}` : `exited with ${code}`)
      done()
    })
  })
}
