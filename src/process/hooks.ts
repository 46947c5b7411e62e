import { spawn } from 'node:child_process'
import { dirname } from 'node:path'
import { appendText, ensureDir } from '../disk/door.js'

/** How long a short-lived command (kill, list) keeps running for a hook before leaving it to finish alone. */
const HOOK_PATIENCE_MS = 5000

/**
 * Runs a hook command (an argv, never through a shell) with `env` added to harness's environment. A hook
 * never fails harness: a command that cannot start or exits non-zero is noted in `logPath` (the session's
 * log), and the command is not waited for beyond a few seconds.
 */
export function runHook(
  argv: readonly string[],
  env: Record<string, string>,
  logPath: string,
  baseEnv: NodeJS.ProcessEnv,
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
    const timer = setTimeout(() => {
      child.unref()
      resolve()
    }, HOOK_PATIENCE_MS)
    timer.unref()
    child.on('error', (error) => {
      clearTimeout(timer)
      note(`could not start: ${error.message}`)
      resolve()
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) note(signal ? `ended by ${signal}` : `exited with ${code}`)
      resolve()
    })
  })
}
