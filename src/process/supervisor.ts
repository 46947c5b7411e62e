import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import { constants, writeSync } from 'node:fs'
import { access, stat } from 'node:fs/promises'
import { setPriority } from 'node:os'
import { delimiter, isAbsolute, join, resolve } from 'node:path'
import { isatty } from 'node:tty'
import { ExternalToolError } from '../errors.js'
import { selfCommand } from '../runtime.js'
import { identify, identifyChild, type ProcessIdentity } from './identity.js'
import { type LogWriteFailure, type OutputSink, pipeAgentOutput } from './pipes.js'
import { stopProcessTree } from './stop.js'

/**
 * The only module that spawns agents (docs/development/design.md, "Runs and the supervisor"). It knows processes, not records: what to record is the
 * caller's business, told through hooks.
 */
export interface AgentLaunch {
  command: string
  args: string[]
  cwd: string
  /** The complete environment of the agent. */
  env: NodeJS.ProcessEnv
  /**
   * interactive: inherits the terminal and stays in harness's process group (Ctrl-C, resizes, raw mode reach it).
   * headless: stdin /dev/null, output appended to the log and copied to `tee`.
   * background: its own process group, stdin /dev/null, output straight into the log file descriptor.
   */
  mode: 'interactive' | 'headless' | 'background'
  logFd?: number
  tee?: OutputSink
}

export interface AgentHooks {
  /**
   * Commits the run; called once the signal handlers are in place, so that no signal can leave a committed run
   * without an outcome. A stop signal received before the agent is spawned means it never starts.
   */
  beforeSpawn?(): Promise<void>
  /** The agent has a pid; identity is null only if it already exited and was reaped. Resolves once recorded. */
  started(pid: number, identity: ProcessIdentity | null): Promise<void>
  /**
   * harness was told to stop (SIGTERM/SIGHUP; SIGINT in the background; in the foreground also SIGINT/SIGQUIT
   * before the agent is spawned): how long to wait before SIGKILL.
   */
  stopping(signal: NodeJS.Signals): Promise<{ graceMs: number }>
  /**
   * Aborted when a stop was asked for another way than by a signal (a stop_request committed in the record):
   * handled as SIGTERM to harness would be.
   */
  stopRequested?: AbortSignal
}

export interface AgentExit {
  exitCode: number | null
  signal: NodeJS.Signals | null
  /**
   * The signal harness received that made it stop the agent (SIGTERM, SIGHUP; SIGINT in the background; any stop
   * signal before the agent was spawned). Null when none did, or only a stop_request did.
   */
  stopSignal: NodeJS.Signals | null
  /** Foreground: the terminal's Ctrl-C reached harness while the agent ran (the agent got it too). */
  keyboardInterrupt?: boolean
  /** Interactive: harness's terminal had hung up when the agent ended (the agent may have seen it first). */
  hungUp?: boolean
  /**
   * The stop signalled the agent itself (or kept it from starting). False when the agent had exited by itself
   * before the stop reached it: then its own exit decides the status.
   */
  stopped: boolean
  /** A stop signal came before the agent was spawned: it never ran. */
  notStarted?: boolean
  spawnError?: string
  /** Headless: the log could not be written from some point on (a full disk); the output still went to `tee`. */
  logFailure?: LogWriteFailure
}

export interface SupervisedAgent {
  exit: AgentExit
  /** Removes the signal handlers; call after the outcome is recorded, so no signal can interrupt that. */
  release(): void
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT']
/** Keyboard signals: in the foreground they reach the agent too (same terminal, same process group). */
const KEYBOARD_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGQUIT']

/** What the supervisor itself received while the run was on: the facts an interruption is decided from. */
interface Received {
  /** The first signal that made harness stop the agent (null: none, or only a stop_request did). */
  stopSignal: NodeJS.Signals | null
  /** A stop_request (kill, pause, budget, timeout) made harness stop the agent. */
  requested: boolean
  /** Foreground: the terminal's Ctrl-C reached harness while the agent ran (the agent got it too). */
  keyboardInterrupt: boolean
}

/**
 * Installs harness's handlers of the stop signals (before anything is committed: a signal with no handler
 * would kill harness and leave a RUNNING record behind). In the foreground, Ctrl-C and Ctrl-\ belong to the
 * agent once it runs: harness stays to record how it ended, noting a Ctrl-C; before that they abort the run.
 * SIGQUIT's default would kill harness with a core dump. Returns the function that removes them.
 */
function onStopSignals(
  launch: AgentLaunch,
  received: Received,
  spawned: () => boolean,
  stop: () => void,
): () => void {
  const foreground = launch.mode !== 'background'
  const handlers = new Map<NodeJS.Signals, () => void>()
  for (const signal of foreground ? [...STOP_SIGNALS, 'SIGQUIT' as const] : STOP_SIGNALS) {
    const keyboard = foreground && KEYBOARD_SIGNALS.includes(signal)
    const handler = () => {
      if (keyboard && spawned()) {
        if (signal === 'SIGINT') received.keyboardInterrupt = true
        return
      }
      received.stopSignal ??= signal
      stop()
    }
    handlers.set(signal, handler)
    process.on(signal, handler)
  }
  return () => {
    for (const [signal, handler] of handlers) process.removeListener(signal, handler)
  }
}

/** Starts the agent, records its start through hooks, stops its whole tree when harness is told to stop. */
export async function superviseAgent(launch: AgentLaunch, hooks: AgentHooks): Promise<SupervisedAgent> {
  let identity: ProcessIdentity | null = null
  const received: Received = { stopSignal: null, requested: false, keyboardInterrupt: false }
  let stopping: Promise<void> | null = null
  let started: Promise<void> = Promise.resolve()
  let ended: Promise<SpawnFacts> | undefined
  let spawned = false
  let stopped = false

  const stop = () => {
    if (stopping) return
    stopping = (async () => {
      await started
      const { graceMs } = await hooks.stopping(received.stopSignal ?? 'SIGTERM')
      // With its host facts: checks refuse a pid without them.
      // The agent's own exit wakes the stop at once (no poll interval between its death and the outcome).
      if (identity?.start_time)
        stopped = (await stopProcessTree(identity, { graceMs, rootExit: ended })).rootSignalled
    })().catch((error) => report(launch, `stopping the agent failed: ${(error as Error).message}`))
  }
  const onStopRequested = () => {
    received.requested = true
    stop()
  }
  const removeHandlers = onStopSignals(launch, received, () => spawned, stop)
  if (hooks.stopRequested?.aborted) onStopRequested()
  hooks.stopRequested?.addEventListener('abort', onStopRequested, { once: true })
  const release = () => {
    removeHandlers()
    hooks.stopRequested?.removeEventListener('abort', onStopRequested)
  }

  let child: ChildProcess
  try {
    await hooks.beforeSpawn?.()
    if (received.stopSignal || received.requested) {
      await stopping
      const { stopSignal } = received
      return { exit: { exitCode: null, signal: null, stopSignal, stopped: true, notStarted: true }, release }
    }
    spawned = true
    ;({ child, ended } = spawnAgent(launch))
  } catch (error) {
    release()
    throw error
  }
  // Interactive: whether harness's terminal hangs up before the agent ends (the agent may see it first).
  const terminal = launch.mode === 'interactive' && isatty(0)
  const pipe =
    launch.mode === 'headless' && child.pid !== undefined ? pipeAgentOutput(child, launch) : undefined

  if (child.pid !== undefined) {
    const pid = child.pid
    // Read before the event loop turns, so the child cannot have been reaped yet: even an agent that already
    // exited is still a zombie with its start time (bun may reap sooner: then it is recorded as exited).
    identity = identifyChild(pid)
    started = hooks.started(pid, identity)
    await started
  }
  const facts = await (ended as Promise<SpawnFacts>)
  // What harness had received when the agent ended; a signal after that does not interrupt this run.
  const atEnd = { ...received, hungUp: terminal && !isatty(0) }
  await stopping
  return { exit: agentExit(facts, { ...atEnd, stopped }, pipe?.logFailure()), release }
}

/** What spawning and then waiting for the agent showed: the input of `agentExit`. */
export interface SpawnFacts {
  /** Undefined: the agent was never started. */
  pid: number | undefined
  exitCode: number | null
  signal: NodeJS.Signals | null
  /** Why it could not be started (ENOENT, EACCES, E2BIG, ...). */
  error?: NodeJS.ErrnoException
}

/**
 * How the agent's run ended, from what the spawn and the wait showed and what the stop did: a pure function
 * (test/unit/process/supervisor.test.ts). An agent that never got a pid, or has neither an exit code nor a signal,
 * did not start: its exit code is null and `spawnError` says why.
 */
export function agentExit(
  facts: SpawnFacts,
  stop: {
    stopSignal: NodeJS.Signals | null
    stopped: boolean
    keyboardInterrupt?: boolean
    hungUp?: boolean
  },
  logFailure?: LogWriteFailure,
): AgentExit {
  const failed = facts.pid === undefined || (facts.exitCode === null && facts.signal === null)
  const spawnError = failed ? spawnFailure({ cause: facts.error }) : undefined
  return {
    exitCode: spawnError ? null : facts.exitCode,
    signal: facts.signal,
    stopSignal: stop.stopSignal,
    stopped: stop.stopped,
    ...(stop.keyboardInterrupt ? { keyboardInterrupt: true } : {}),
    ...(stop.hungUp ? { hungUp: true } : {}),
    ...(spawnError ? { spawnError } : {}),
    ...(logFailure ? { logFailure } : {}),
  }
}

/**
 * Git's location variables: set by a caller (a git hook, `git rebase -x`, a wrapper script), they would point
 * the agent's git at the caller's repository, so its commits would not land on its own branch.
 */
export const GIT_LOCATION_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
] as const

/**
 * The agent's environment, built here and only here, for every run (start and resume; headless,
 * interactive, background, tmux-hosted): the given one with `PWD` set to the folder the agent starts in
 * (opencode's `run` takes its project folder from `$PWD`: an inherited one made it edit the user's checkout)
 * and git's location variables removed.
 */
export function agentEnvironment(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env, PWD: cwd }
  for (const name of GIT_LOCATION_VARIABLES) delete result[name]
  return result
}

/**
 * Spawns the agent with node's own child_process (its environment from `agentEnvironment`): `ended` resolves once it exited and its output pipes are closed (a failure to start resolves it too).
 */
function spawnAgent(launch: AgentLaunch): { child: ChildProcess; ended: Promise<SpawnFacts> } {
  let child: ChildProcess
  try {
    child = spawn(launch.command, launch.args, {
      cwd: launch.cwd,
      env: agentEnvironment(launch.env, launch.cwd),
      stdio: stdioFor(launch),
      detached: launch.mode === 'background',
      windowsHide: true,
    })
  } catch (error) {
    // E2BIG and other errors node throws at once: there is no process.
    const facts: SpawnFacts = {
      pid: undefined,
      exitCode: null,
      signal: null,
      error: error as NodeJS.ErrnoException,
    }
    return { child: { pid: undefined } as ChildProcess, ended: Promise.resolve(facts) }
  }
  const ended = new Promise<SpawnFacts>((resolve) => {
    let error: NodeJS.ErrnoException | undefined
    child.on('error', (err: NodeJS.ErrnoException) => {
      // ENOENT, EACCES: reported after spawn returned; 'close' follows. A later error (a failed kill) is not fatal.
      if (child.pid === undefined) error ??= err
    })
    child.once('close', (code, signal) => {
      if (error || child.pid === undefined) resolve({ pid: undefined, exitCode: null, signal: null, error })
      else resolve({ pid: child.pid, exitCode: code, signal })
    })
  })
  return { child, ended }
}

function stdioFor(launch: AgentLaunch): StdioOptions {
  if (launch.mode === 'interactive') return ['inherit', 'inherit', 'inherit']
  if (launch.mode === 'headless') return ['ignore', 'pipe', 'pipe']
  const log = launch.logFd ?? 'ignore'
  return ['ignore', log, log]
}

/** Why the agent could not be started, in words a person can act on. */
export function spawnFailure(result: { cause?: unknown; shortMessage?: string; message?: string }): string {
  const cause = result.cause as NodeJS.ErrnoException | undefined
  if (cause?.code === 'ENOENT') return `command not found: ${cause.path ?? ''}`.trim()
  if (cause?.code === 'EACCES') return `permission denied: ${cause.path ?? ''}`.trim()
  if (cause?.code === 'E2BIG') {
    return "argument list too long (E2BIG): the kernel refused the agent's command line (a prompt over 128 KiB, or all arguments together over its limit); put the long text in a file and point the prompt at it"
  }
  return cause?.message ?? result.shortMessage ?? result.message ?? 'the agent could not be started'
}

function report(launch: AgentLaunch, message: string): void {
  if (launch.logFd === undefined) return
  try {
    writeSync(launch.logFd, `\n[harness] ${message}\n`)
  } catch {}
}

/** Finds `command` on PATH (or checks it directly when it holds a '/'); an agent that is not there is exit 5. */
export async function assertExecutable(
  command: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  what: string,
): Promise<string> {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, command))
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK)
      if ((await stat(candidate)).isFile()) return candidate
    } catch {}
  }
  if (command.includes('/')) {
    throw new ExternalToolError(
      `${what}: "${command}" is not an executable file`,
      'check the path, and that the file exists and is executable',
      'AGENT_NOT_FOUND',
    )
  }
  throw new ExternalToolError(
    `${what}: "${command}" is not installed or not on PATH`,
    `install it, or point the provider's "command" at it in .harness/config.json`,
    'AGENT_NOT_FOUND',
  )
}

export interface DetachedSupervisor {
  identity: ProcessIdentity
  /** Hands the supervisor its work; it starts nothing before this (EOF without it: it exits). */
  send(spec: unknown): void
  /** Gives up: the supervisor sees EOF and exits without starting anything. */
  abandon(): void
}

/**
 * Starts harness itself as a detached supervisor (hidden `__supervise` command) in its own session, with no
 * inherited stdio: `$(harness run --detach …)` returns at once. Its work arrives on a private stdin pipe
 * only after the record holding its identity was committed, so a record never names an unknown supervisor.
 */
export async function startDetachedSupervisor(env: NodeJS.ProcessEnv): Promise<DetachedSupervisor> {
  return startDetachedHarness(['__supervise'], env, '/')
}

/**
 * Starts `harness <args>` detached (own session, no inherited stdio, work on a private stdin pipe), as the
 * supervisor of a background run or the runner of a chain (docs/continuity.md): both are recorded by identity.
 */
export async function startDetachedHarness(
  harnessArgs: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  options: { lowPriority?: boolean } = {},
): Promise<DetachedSupervisor> {
  const [command, ...args] = selfCommand(harnessArgs)
  const child = spawn(command as string, args, {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
    env,
    cwd,
  })
  child.unref()
  const pid = child.pid
  if (pid !== undefined && options.lowPriority) {
    // Housekeeping (auto cleanup, docs/history.md) yields the CPU to the agent: nice 10, as `nice` would.
    try {
      setPriority(pid, 10)
    } catch {}
  }
  const identity = pid === undefined ? null : identify(pid)
  if (pid === undefined || !identity) {
    throw new ExternalToolError('could not start the background supervisor', undefined, 'SUPERVISOR_FAILED')
  }
  const stdin = child.stdin
  stdin?.on('error', () => {})
  return {
    identity,
    send(spec) {
      stdin?.end(`${JSON.stringify(spec)}\n`)
    },
    abandon() {
      stdin?.end()
    },
  }
}
