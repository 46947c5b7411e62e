/**
 * The small entry that bin/harness runs before the bundle, and the native executable before the rest of
 * itself: it answers the plain `harness session path <id>` (cli/fast-session-path.ts, loaded for that line
 * only) and the top-level help, without the bundle, zod or commander (docs/development/native.md, "Start-up"). It answers
 * only when the answer is certainly the one the full CLI would give, byte for byte, with the same exit code;
 * for anything else (an error to report, a record that is not plainly valid, a RUNNING session whose liveness
 * the full CLI checks, a terminal whose width the help would wrap to) it returns null and the full CLI answers.
 */
import { fdMayBeTerminal, writeToFd } from '../disk/fd.js'
import { fastCall } from './fast-path.js'

/** What `npm run build` captures from the full CLI (scripts/build.mjs). */
export interface BuiltAnswers {
  /** `harness --help` with stdout not a terminal (commander then wraps at 80 columns). */
  help: string
  /** `harness` alone, with stderr not a terminal: its stderr and exit code. */
  noCommand: { stderr: string; exitCode: number }
}

export interface Surroundings {
  cwd: string
  env: NodeJS.ProcessEnv
  stdoutIsTerminal: boolean
  stderrIsTerminal: boolean
}

export interface FastAnswer {
  stdout: string
  stderr: string
  exitCode: number
}

/** The full CLI's answer to `argv`, when it can be given here; null leaves it to the full CLI. */
export async function fastAnswer(
  argv: readonly string[],
  around: Surroundings,
  built: BuiltAnswers,
): Promise<FastAnswer | null> {
  const call = fastCall(argv)
  if (!call) return null
  // commander would colour or not by these, and wrap to a terminal's width.
  const colourForced = around.env.FORCE_COLOR !== undefined || around.env.CLICOLOR_FORCE !== undefined
  switch (call.kind) {
    case 'help':
      return around.stdoutIsTerminal || colourForced ? null : { stdout: built.help, stderr: '', exitCode: 0 }
    case 'no-command':
      return around.stderrIsTerminal || colourForced
        ? null
        : { stdout: '', stderr: built.noCommand.stderr, exitCode: built.noCommand.exitCode }
    case 'path': {
      // Loaded for this line alone: the help needs none of it (the native executable loads it as a chunk).
      const { sessionPath } = await import('./fast-session-path.js')
      let path: { id: string; path: string } | null
      try {
        path = sessionPath(call.id, call.dir, around)
      } catch {
        return null // the full CLI reports it (or finds that it was nothing)
      }
      if (!path) return null
      return {
        stdout: call.json
          ? `${JSON.stringify(path, null, 2)}\n`
          : `${path.path}${path.path.endsWith('\n') ? '' : '\n'}`,
        stderr: '',
        exitCode: 0,
      }
    }
  }
}

declare const HARNESS_BUILT_ANSWERS: BuiltAnswers

/**
 * Runs the fast answer for this process: prints it and returns the exit code, or returns null (nothing
 * printed) for the full CLI to take over. The defines come from scripts/build.mjs. It writes with
 * fs.writeSync: `process.stdout` alone would load node's whole stream stack, which costs more than the rest.
 */
export async function answer(argv: readonly string[]): Promise<number | null> {
  if (!fastCall(argv)) return null // before looking at anything: most lines are not the small entry's
  let cwd: string
  try {
    cwd = process.cwd()
  } catch {
    return null // a removed working folder: the full CLI says so
  }
  const found = await fastAnswer(
    argv,
    { cwd, env: process.env, stdoutIsTerminal: mayBeTerminal(1), stderrIsTerminal: mayBeTerminal(2) },
    HARNESS_BUILT_ANSWERS,
  )
  if (!found) return null
  writeAll(1, found.stdout)
  writeAll(2, found.stderr)
  return found.exitCode
}

/** A character device other than /dev/null may be a terminal: the full CLI answers then. */
function mayBeTerminal(fd: number): boolean {
  try {
    return fdMayBeTerminal(fd)
  } catch {
    return true
  }
}

/** The whole text, or as much as a reader takes: one that has gone away (`| head`) is not an error (cli/output.ts). */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text)
  let done = 0
  while (done < bytes.length) {
    try {
      done += writeToFd(fd, bytes, done)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EPIPE' || code === 'EIO') return
      if (code !== 'EAGAIN') throw error // EAGAIN: a non-blocking pipe that is full, to be tried again
    }
  }
}
