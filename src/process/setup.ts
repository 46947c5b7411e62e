import { ExternalToolError } from '../errors.js'
import { identify } from './identity.js'
import { releasePipesAfterExit } from './pipes.js'
import { stopProcessTree } from './stop.js'

/**
 * Runs the project's `worktree.setup` in a new worktree before the agent starts; its failure fails the run.
 * It gets its own process group so that an abort (Ctrl-C during set-up) stops everything it started, not just
 * the shell (a lingering `npm ci` would hold the output pipe open and outlive harness).
 */
export async function runSetupCommand(
  setup: { command: string; args: string[] },
  cwd: string,
  /** Its whole environment (the caller's, as the agent's is given): nothing is taken from this process. */
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  /** Each line of its output as it comes, for people watching a long `npm ci`. */
  onLine: (line: string) => void = () => {},
  failure: {
    /** The config file that set `worktree.setup`, for the hint. */
    file?: string
    /** onLine's lines reached the user: the error then does not repeat its last ones. */
    streamed?: boolean
  } = {},
): Promise<void> {
  const { execa } = await import('execa')
  const { command, args } = setup
  signal.throwIfAborted()
  const child = execa(command, args, {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    all: true,
    stdin: 'ignore',
    detached: true,
    cleanup: false,
    stripFinalNewline: true,
  })
  const tail: string[] = []
  let partial = ''
  const take = (line: string) => {
    tail.push(line)
    if (tail.length > TAIL_LINES) tail.shift()
    onLine(line)
  }
  child.all?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split(/\r?\n/)
    partial = lines.pop() ?? ''
    for (const line of lines) take(line)
  })
  // A setup that starts a background process (`… &`) must not hold the run until that process exits.
  releasePipesAfterExit(child)
  const identity = child.pid === undefined ? null : identify(child.pid)
  let stopping: Promise<unknown> | undefined
  const onAbort = () => {
    if (identity?.start_time) stopping = stopProcessTree(identity, { graceMs: 1000 }) // with its host facts
  }
  signal.addEventListener('abort', onAbort, { once: true })
  const result = await child.finally(() => signal.removeEventListener('abort', onAbort))
  // The shell may be gone before what it started: harness must not exit before that is stopped too.
  await stopping
  if (partial) take(partial)
  signal.throwIfAborted()
  if (result.failed) {
    const how =
      result.exitCode !== undefined ? `exit ${result.exitCode}` : (result.signal ?? 'could not start')
    const error = new ExternalToolError(
      `worktree setup failed (${how}): ${[command, ...args].join(' ')}`,
      `fix "worktree.setup" in ${failure.file ?? '.harness/config.json'}${failure.streamed ? ' (its output is above)' : ''}`,
      'SETUP_FAILED',
    )
    while (tail.length && !tail[tail.length - 1]?.trim()) tail.pop()
    if (!failure.streamed) error.details = tail
    throw error
  }
}

/** How many of its last output lines a failed setup shows. */
const TAIL_LINES = 20
