import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { tmpDir } from './tmp.js'

/**
 * A private tmux server (its own socket), started in the foreground as a child of the test so that it never
 * outlives it. Panes are real pseudo-terminals: interactive runs see a TTY, Ctrl-C is a real SIGINT from the
 * terminal driver, and killing a session is a real hang-up.
 */
export class TmuxServer {
  private readonly server: ChildProcess
  readonly socket: string

  constructor(readonly root: string) {
    this.socket = `harness-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`
    this.server = spawn('tmux', ['-L', this.socket, '-f', '/dev/null', '-D'], { stdio: 'ignore' })
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' })
  }

  /** Runs a bash script in a new detached session (retrying while the server starts, for up to a minute). */
  async start(name: string, script: string, env: NodeJS.ProcessEnv): Promise<void> {
    const file = join(this.root, `${name}.sh`)
    const exports = Object.entries(env)
      .filter(([key, value]) => value !== undefined && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      .map(([key, value]) => `export ${key}=${shellQuote(value as string)}`)
      .join('\n')
    writeFileSync(file, `${exports}\n${script}\n`, { mode: 0o700 })
    const deadline = Date.now() + 60_000
    for (;;) {
      try {
        this.tmux('new-session', '-d', '-s', name, '-x', '120', '-y', '30', `bash ${shellQuote(file)}`)
        return
      } catch (error) {
        if (Date.now() > deadline) throw error
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
  }

  sendKeys(name: string, ...keys: string[]): void {
    this.tmux('send-keys', '-t', name, ...keys)
  }

  /** Whether the session still exists (its script still runs); false too once the server has no session. */
  hasSession(name: string): boolean {
    try {
      this.tmux('has-session', '-t', `=${name}`)
      return true
    } catch {
      return false
    }
  }

  killSession(name: string): void {
    this.tmux('kill-session', '-t', name)
  }

  stop(): void {
    try {
      this.tmux('kill-server')
    } catch {}
    this.server.kill('SIGKILL')
  }
}

export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/**
 * Polls `probe` (which may be async) until it holds; the ceiling is generous so that a busy machine only makes
 * it slower.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * Two private tmux servers for a test file: harness's (HARNESS_TMUX_SOCKET points at it) and the user's, whose
 * panes play the user's terminals. Both answer before the file's first test and stop after its last.
 */
export function tmuxServers(): { harnessTmux: TmuxServer; userTmux: TmuxServer } {
  const harnessTmux = new TmuxServer(tmpDir())
  const userTmux = new TmuxServer(tmpDir())
  beforeAll(async () => {
    for (const server of [harnessTmux, userTmux]) {
      await waitFor('the tmux server', () => {
        try {
          server.tmux('list-sessions')
          return true
        } catch {
          return false
        }
      })
    }
  })
  afterAll(() => {
    harnessTmux.stop()
    userTmux.stop()
  })
  return { harnessTmux, userTmux }
}

/** A private tmux server for a test file, stopped after its last test. */
export function tmuxServer(): TmuxServer {
  const server = new TmuxServer(tmpDir())
  afterAll(() => server.stop())
  return server
}
