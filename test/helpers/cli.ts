import { spawn } from 'node:child_process'
import { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { CliIo } from '../../src/cli/io.js'
import { autoCleanupOffByEnv } from '../../src/sessions/removal/auto-cleanup.js'

/**
 * Which runtime the tests' harness processes are: `node` (the default: bin/harness.cjs and the node bundle) or
 * `native` (HARNESS_TEST_RUNTIME=native: dist/harness-native, which `npm run build` makes, and then every
 * command runs as a process, as under HARNESS_TEST_BINARY=1, so that the native executable answers them all).
 */
export const TEST_RUNTIME: 'node' | 'native' =
  process.env.HARNESS_TEST_RUNTIME === 'native' ? 'native' : 'node'

/** The node runtime's entry script: what `harness` runs under node, and what it runs again to start itself. */
export const NODE_ENTRY = fileURLToPath(new URL('../../bin/harness.cjs', import.meta.url))

/** The native executable `npm run build` makes. */
export const NATIVE_BIN = fileURLToPath(new URL('../../dist/harness-native', import.meta.url))

/** The `harness` command (the launcher that picks a runtime; the tests' HARNESS_RUNTIME picks theirs). */
export const HARNESS_LAUNCHER = fileURLToPath(new URL('../../bin/harness', import.meta.url))

/** The `harness` the tests run as a user would: the executable of the runtime under test. */
export const HARNESS_BIN = TEST_RUNTIME === 'native' ? NATIVE_BIN : NODE_ENTRY

export interface CliResult {
  exitCode: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  cwd: string
  env?: NodeJS.ProcessEnv
  input?: string
  timeoutMs?: number
  /** Run the built binary even for a command that could run in the test worker. */
  process?: boolean
}

/**
 * Runs `harness <args>` and returns its exit status and output.
 *
 * A command that starts a process in the background, stops one or follows one (`run --detach`, `--tmux`,
 * `kill`, `pause`, `attach`, `logs -f`, `chain run`, `chain kill`, the hidden ones) runs as the built
 * `bin/harness`, a real process as a user starts it: its signals, its pid in records, its exit. So does a
 * foreground run in a project where it would start auto cleanup (a detached harness). Every other command,
 * a foreground `run` or `resume` too, runs inside the test worker through the same entry the binary runs
 * (`runCli`, src/app/entry.ts) with the given directory, environment and stdin and captured stdout and stderr:
 * the same parsing, output and exit status without starting node, which costs about a quarter of a second of
 * CPU each and was most of what the suite spent. A foreground run's record then names the test worker as its
 * supervisor. test/e2e/in-process-cli.test.ts checks that both ways give the same answers;
 * `HARNESS_TEST_BINARY=1` runs every command as a process, and `process: true` one call (a test whose subject
 * is the process: its signals, its pid, two processes racing).
 */
export function cli(args: string[], options: CliOptions): Promise<CliResult> {
  const binary =
    options.process === true ||
    process.env.HARNESS_TEST_BINARY === '1' ||
    TEST_RUNTIME === 'native' ||
    needsProcess(args, options.env ?? process.env)
  return binary ? cliProcess(args, options) : cliInProcess(args, options)
}

/** The command words (`session logs`), read past global flags as commander reads them. */
function commandWords(args: string[]): string[] {
  const words: string[] = []
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const arg = args[i] as string
    if (arg === '--') break
    if (arg === '--dir') i++
    else if (!arg.startsWith('-')) words.push(arg)
  }
  return words
}

const PROCESS_COMMANDS = new Set([
  'session attach',
  'session kill',
  'session pause',
  'chain run',
  'chain kill',
])
/** They run the agent in the foreground, supervised by the calling process, unless a flag below says otherwise. */
const FOREGROUND_RUNS = new Set(['run', 'chat', 'session resume', 'session continue'])
/** They run the agent in the background: its supervisor is a harness process, so the test starts one too. */
const BACKGROUND_FLAGS = ['--detach', '--tmux', '--attach']

/**
 * Whether the command needs a real harness process: it starts harness again in the background, signals or
 * follows a process, or (a foreground run) would start auto cleanup in the background under `env`.
 */
export function needsProcess(args: string[], env: NodeJS.ProcessEnv): boolean {
  const [first = '', second = ''] = commandWords(args)
  const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args
  // `-d`, or a bundle of short flags holding it (`-qd`), as commander reads them.
  const hasShort = (letter: string) => own.some((arg) => /^-[a-zA-Z]+$/.test(arg) && arg.includes(letter))
  if (first.startsWith('__') || second.startsWith('__')) return true
  if (PROCESS_COMMANDS.has(first) || PROCESS_COMMANDS.has(`${first} ${second}`)) return true
  if (FOREGROUND_RUNS.has(first) || FOREGROUND_RUNS.has(`${first} ${second}`)) {
    if (hasShort('d') || own.some((arg) => BACKGROUND_FLAGS.includes(arg))) return true
    // A new run (not a resume) may start the daily auto cleanup, a detached harness, unless it is off.
    return (first === 'run' || first === 'chat') && !autoCleanupOffByEnv(env)
  }
  return first === 'session' && second === 'logs' && (hasShort('f') || own.includes('--follow'))
}

/** Signals a foreground run listens to while it works; none may stay behind in the worker. */
const RUN_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT']

function signalListeners(): string {
  return RUN_SIGNALS.map((signal) => `${signal}:${process.listenerCount(signal)}`).join(' ')
}

/** Commands running in the worker at the moment, and the worker's own entry script while they do. */
const inWorker: { depth: number; entry: string | undefined } = { depth: 0, entry: undefined }

/** Text written to it is kept. */
class CapturedStream extends Writable {
  text = ''

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void) {
    this.text += chunk.toString()
    done()
  }
}

/** Runs `harness <args>` inside the test worker through the binary's own entry (see `cli`). */
export async function cliInProcess(
  args: string[],
  options: Omit<CliOptions, 'process' | 'timeoutMs'>,
): Promise<CliResult> {
  const { runCli } = await import('../../src/app/entry.js')
  const stdout = new CapturedStream()
  const stderr = new CapturedStream()
  // As the spawned binary has it: no terminal anywhere, stdin the given input (or empty) then closed.
  const io: CliIo = {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdin: Readable.from(
      options.input === undefined || options.input === '' ? [] : [Buffer.from(options.input)],
    ),
    stdout: stdout as unknown as NodeJS.WriteStream,
    stderr: stderr as unknown as NodeJS.WriteStream,
  }
  // What harness runs to start itself again (the supervisor in tmux of a resumed session hosted there, by
  // src/runtime.ts `selfCommand`) is node with this process's entry script: while any command
  // runs in the worker, that is the node runtime's, not vitest's.
  if (inWorker.depth++ === 0) {
    inWorker.entry = process.argv[1]
    process.argv[1] = NODE_ENTRY
  }
  const alone = inWorker.depth === 1
  const listenersBefore = signalListeners()
  let outcome: Awaited<ReturnType<typeof runCli>>
  try {
    outcome = await runCli(args, io)
  } finally {
    if (--inWorker.depth === 0) process.argv[1] = inWorker.entry as string
  }
  const listenersAfter = signalListeners()
  // Counted only for a command that ran alone: another one's run may hold its own listeners meanwhile.
  if (alone && inWorker.depth === 0 && listenersAfter !== listenersBefore) {
    throw new Error(
      `${args.join(' ')} left signal listeners behind: ${listenersBefore}, then ${listenersAfter}`,
    )
  }
  // The binary would die by it (an agent killed by SIGINT): a test of that needs the process.
  if (outcome.signal) throw new Error(`${args.join(' ')} ended by ${outcome.signal}: give it process: true`)
  return { exitCode: outcome.code, signal: null, stdout: stdout.text, stderr: stderr.text }
}

/** Runs the built harness (HARNESS_BIN) as a user would: real process, no TTY, stdin closed. */
function cliProcess(args: string[], options: CliOptions): Promise<CliResult> {
  return runProgram(HARNESS_BIN, args, options)
}

/**
 * Runs `command <args>` as a process, no TTY, stdin the given input (or empty) then closed, and returns its
 * exit status and output: another harness executable than the one under test (a copy, the launcher, a link).
 */
export function runProgram(
  command: string,
  args: string[],
  options: Omit<CliOptions, 'process'>,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    // A ceiling for a hung command, far above what any command takes on a busy machine.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000)
    child.on('error', reject)
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer)
      resolve({ exitCode, signal, stdout, stderr })
    })
    // A program may exit without reading its stdin (a launcher that refuses at once): EPIPE is no failure.
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error)
    })
    child.stdin.end(options.input ?? '')
  })
}

/** Parses stdout as the one JSON document `--json` promises. */
export function json<T = unknown>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T
  } catch {
    throw new Error(`stdout is not one JSON document:\n${result.stdout}\nstderr:\n${result.stderr}`)
  }
}
