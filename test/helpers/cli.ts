import { spawn } from 'node:child_process'
import { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { CliIo } from '../../src/cli/io.js'

export const HARNESS_BIN = fileURLToPath(new URL('../../bin/harness', import.meta.url))

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
 * A command that starts, stops or follows processes (`run`, `resume`, `kill`, `pause`, `attach`, `logs -f`,
 * `chain run`, `chain kill`, the hidden ones) runs as the built `bin/harness`, a real process as a user starts
 * it: its signals, its pid in the record, its exit. Every other command runs inside the test worker, through the
 * same entry the binary runs (`runCli`, src/cli/entry.ts) with the given directory, environment and stdin and
 * captured stdout and stderr: the same parsing, output and exit status, without starting node (about a quarter
 * of a second of CPU each, most of what the suite spends). test/e2e/in-process-cli.test.ts checks the two ways
 * give the same answers; `HARNESS_TEST_BINARY=1` runs every command as a process, `process: true` one call.
 */
export function cli(args: string[], options: CliOptions): Promise<CliResult> {
  const binary = options.process === true || process.env.HARNESS_TEST_BINARY === '1' || needsProcess(args)
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
  'run',
  'chat',
  'session resume',
  'session continue',
  'session attach',
  'session kill',
  'session pause',
  'chain run',
  'chain kill',
])

/** Whether the command starts, signals or follows a process, which only a real harness process can show. */
export function needsProcess(args: string[]): boolean {
  const [first = '', second = ''] = commandWords(args)
  if (first.startsWith('__') || second.startsWith('__')) return true
  if (PROCESS_COMMANDS.has(first) || PROCESS_COMMANDS.has(`${first} ${second}`)) return true
  const own = args.includes('--') ? args.slice(0, args.indexOf('--')) : args
  return first === 'session' && second === 'logs' && (own.includes('-f') || own.includes('--follow'))
}

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
  const { runCli } = await import('../../src/cli/entry.js')
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
  const outcome = await runCli(args, io)
  if (outcome.signal)
    throw new Error(`an in-process command asked to die by ${outcome.signal}: ${args.join(' ')}`)
  return { exitCode: outcome.code, signal: null, stdout: stdout.text, stderr: stderr.text }
}

/** Runs the built `bin/harness` as a user would: real process, no TTY, stdin closed. */
function cliProcess(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(HARNESS_BIN, args, {
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
