import { isatty } from 'node:tty'
import { fdMayBeTerminal, releaseHungUpTerminals } from '../disk/door.js'
import { FdWriter, type OutStream } from './fd-writer.js'

/**
 * What a run of the command line works against: the process's own streams, directory and environment when
 * harness runs as a program (main.ts), or a caller's (the tests run most commands in process this way). Nothing
 * else under cli/ and commands/ reads `process.stdin`, `process.stdout`, `process.cwd()` or `process.env`, but
 * the small entry (cli/fast-entry.ts), which bin/harness runs as the process itself before the bundle.
 */
export interface CliIo {
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  /** Whether stdin is a terminal, when that can be told without making the stream (else `stdin.isTTY`). */
  readonly stdinIsTerminal?: () => boolean
  readonly stdout: OutStream
  readonly stderr: OutStream
}

/**
 * The process's own. Output that is not a terminal (a pipe, a file, /dev/null) is written through an FdWriter,
 * and stdin is made only when a command reads it: node's stream stack, which a terminal needs, is what the native
 * executable takes longest to load (docs/development/native.md, "Start-up").
 */
export function processIo(): CliIo {
  return {
    cwd: process.cwd(),
    env: process.env,
    get stdin() {
      return process.stdin
    },
    stdinIsTerminal: () => mayBeTerminal(0) && process.stdin.isTTY === true,
    stdout: outputFor(1),
    stderr: outputFor(2),
  }
}

function outputFor(fd: 1 | 2): OutStream {
  if (mayBeTerminal(fd)) return fd === 1 ? process.stdout : process.stderr
  return new FdWriter(fd)
}

/** A closed descriptor counts as maybe: the process's stream knows how to stand in for one. */
function mayBeTerminal(fd: 0 | 1 | 2): boolean {
  try {
    return fdMayBeTerminal(fd)
  } catch {
    return true
  }
}

/**
 * Before the process exits: a terminal that hung up while harness ran (the user closed it) is let go, so that
 * node's own restoring of its modes at exit does not abort on it (harness then exits with its code, 129 for a
 * hang-up, rather than 134).
 */
export function releaseGoneTerminal(): void {
  releaseHungUpTerminals(isatty)
}
