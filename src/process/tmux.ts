import { execFile, spawnSync } from 'node:child_process'
import { ExternalToolError, IllegalStateError } from '../errors.js'

/**
 * Everything harness asks of tmux (docs/tmux.md). harness keeps its sessions on its own tmux server
 * (`tmux -L harness`), apart from the user's own tmux sessions; `HARNESS_TMUX_SOCKET` names another one (a
 * socket name, or a path when it holds a "/"), which is how tests give every run a private server.
 */
const DEFAULT_TMUX_SOCKET = 'harness'

/** The socket harness uses, from `HARNESS_TMUX_SOCKET` or the default. */
export function tmuxSocket(env: NodeJS.ProcessEnv): string {
  const given = env.HARNESS_TMUX_SOCKET?.trim()
  return given ? given : DEFAULT_TMUX_SOCKET
}

/** The name of a session's tmux session. */
export function tmuxSessionName(id: string): string {
  return `harness-${id}`
}

/** `-L name` for a socket name, `-S path` for a path. */
function socketArgs(socket: string): string[] {
  return socket.includes('/') ? ['-S', socket] : ['-L', socket]
}

/** The tmux environment minus what would make tmux think it runs inside another tmux. */
function tmuxEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { TMUX: _tmux, TMUX_PANE: _pane, ...rest } = env
  return rest
}

/**
 * How long one tmux control call may take (docs/security.md, "Deadlines"): a local socket answers in
 * milliseconds, even on a busy machine; a hung server never does, and harness must not hang with it. Never
 * applied to an attach, which the user holds.
 */
export const TMUX_CALL_DEADLINE_MS = 10_000

/** What a control call that ran out of time reports (its process is killed). */
const NO_ANSWER = `tmux did not answer within ${TMUX_CALL_DEADLINE_MS / 1000} s`

function run(
  socket: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'tmux',
      [...socketArgs(socket), ...args],
      {
        env: tmuxEnv(env),
        encoding: 'utf8',
        maxBuffer: 4 * 1024 * 1024,
        timeout: TMUX_CALL_DEADLINE_MS,
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        if (error?.killed) return resolve({ code: 124, stdout, stderr: NO_ANSWER })
        const code = error ? (typeof error.code === 'number' ? error.code : 127) : 0
        resolve({
          code,
          stdout,
          stderr: stderr || (error && typeof error.code !== 'number' ? error.message : ''),
        })
      },
    )
  })
}

/** tmux's version line ("tmux 3.3a"), or null when tmux cannot be run. For `doctor` and the --tmux check. */
function tmuxVersion(env: NodeJS.ProcessEnv): string | null {
  const result = spawnSync('tmux', ['-V'], {
    env: tmuxEnv(env),
    encoding: 'utf8',
    timeout: TMUX_CALL_DEADLINE_MS,
    killSignal: 'SIGKILL',
  })
  if (result.error || result.status !== 0) return null
  return result.stdout.trim() || null
}

/** `--tmux` without tmux: exit 5, naming it. */
export function assertTmux(env: NodeJS.ProcessEnv): string {
  const version = tmuxVersion(env)
  if (!version) {
    throw new ExternalToolError(
      'tmux is not installed or not on PATH (needed by --tmux and interactive.host "tmux")',
      'install tmux (apt-get install tmux, brew install tmux), or run without --tmux',
      'TMUX_NOT_FOUND',
    )
  }
  return version
}

/**
 * A new detached tmux session running `argv` directly (no shell) in `cwd`; returns the pid of its pane's
 * process, which is `argv[0]` itself.
 */
export async function newTmuxSession(options: {
  socket: string
  name: string
  cwd: string
  argv: string[]
  env: NodeJS.ProcessEnv
  /** Set in the pane's process only (`-e`): tmux gives a pane its server's environment, not the caller's. */
  paneEnv?: Record<string, string>
}): Promise<number> {
  const { socket, name, cwd, argv, env } = options
  const paneEnv = Object.entries(options.paneEnv ?? {}).flatMap(([key, value]) => ['-e', `${key}=${value}`])
  const result = await run(
    socket,
    [
      'new-session',
      '-d',
      '-s',
      name,
      '-c',
      cwd,
      '-x',
      '200',
      '-y',
      '50',
      ...paneEnv,
      '-P',
      '-F',
      '#{pane_pid}',
      ...argv,
    ],
    env,
  )
  if (result.code !== 0) {
    if (/duplicate session/.test(result.stderr)) {
      throw new IllegalStateError(
        `tmux session "${name}" already exists`,
        `end it first: tmux ${socketArgs(socket).join(' ')} kill-session -t ${name}`,
        'TMUX_SESSION_EXISTS',
      )
    }
    throw new ExternalToolError(`tmux new-session failed: ${result.stderr.trim()}`, undefined, 'TMUX_FAILED')
  }
  const pid = Number.parseInt(result.stdout.trim(), 10)
  if (!Number.isInteger(pid) || pid <= 0) {
    throw new ExternalToolError(`tmux did not report the pane's process: ${result.stdout.trim()}`)
  }
  return pid
}

/** `=name` targets the session with exactly that name (tmux would otherwise match a prefix). */
function exact(name: string): string {
  return `=${name}`
}

export async function hasTmuxSession(socket: string, name: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  return (await run(socket, ['has-session', '-t', exact(name)], env)).code === 0
}

/** Ends a tmux session (its processes get SIGHUP); a session that is already gone is fine. */
export async function killTmuxSession(socket: string, name: string, env: NodeJS.ProcessEnv): Promise<void> {
  await run(socket, ['kill-session', '-t', exact(name)], env)
}

/** The visible screen of a pane, as text (no escapes). */
export async function capturePane(
  socket: string,
  target: string,
  env: NodeJS.ProcessEnv,
): Promise<string | null> {
  const result = await run(socket, ['capture-pane', '-p', '-J', '-t', target], env)
  return result.code === 0 ? result.stdout : null
}

/**
 * Types `text` into the session's pane as it is (`send-keys -l`: no key names, no bindings), then Enter; an
 * empty text sends Enter alone. tmux reads an argument that ends in ";" as the end of a command, and "\;" as
 * a ";": a final ";" is written "\;" so that it is typed too.
 */
export async function sendLine(
  socket: string,
  name: string,
  text: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const target = `${exact(name)}:`
  const literal = text.endsWith(';') ? `${text.slice(0, -1)}\\;` : text
  const typed = text === '' ? [] : ['send-keys', '-t', target, '-l', '--', literal, ';']
  const result = await run(socket, [...typed, 'send-keys', '-t', target, 'Enter'], env)
  if (result.code !== 0) {
    throw new ExternalToolError(`tmux send-keys failed: ${result.stderr.trim()}`, undefined, 'TMUX_FAILED')
  }
}

/**
 * Copies everything the pane shows to `logPath`. tmux runs the pipe command through the shell, so the one
 * value in it, harness's own log path, is single-quoted.
 */
export async function pipePaneToLog(
  socket: string,
  target: string,
  logPath: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const quoted = `'${logPath.replace(/'/g, `'\\''`)}'`
  const result = await run(socket, ['pipe-pane', '-t', target, `exec cat >> ${quoted}`], env)
  if (result.code !== 0) {
    throw new ExternalToolError(`tmux pipe-pane failed: ${result.stderr.trim()}`, undefined, 'TMUX_FAILED')
  }
}

/**
 * Attaches this terminal to a session until the user detaches (prefix, then d) or the session ends.
 * Resolves with tmux's exit code. From inside another tmux, the client is nested on purpose: harness's
 * sessions live on their own server.
 *
 * The wait blocks harness's event loop: a harness that has read its terminal before (the dashboard, `harness
 * ui`) would otherwise go on reading it while tmux runs, and take the user's keys from tmux.
 */
export async function attachTmuxSession(
  socket: string,
  name: string,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  // The terminal's Ctrl-C belongs to tmux (raw mode); a SIGINT from elsewhere does not end harness meanwhile.
  const ignore = () => {}
  process.on('SIGINT', ignore)
  try {
    const result = spawnSync('tmux', [...socketArgs(socket), 'attach-session', '-t', exact(name)], {
      stdio: 'inherit',
      env: tmuxEnv(env),
    })
    if (result.error) {
      throw new ExternalToolError(
        `tmux attach failed: ${result.error.message}`,
        undefined,
        'TMUX_FAILED',
        result.error,
      )
    }
    return result.status ?? 1
  } finally {
    process.removeListener('SIGINT', ignore)
  }
}
