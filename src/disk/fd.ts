// Part of the door (disk/door.ts re-exports it): the descriptors the process was given (its stdout and stderr),
// on their own, so that the small entry can answer `--help` without loading the rest of the door.
import * as fs from 'node:fs'

/**
 * Whether descriptor `fd` (the process's own: 0, 1, 2) may be a terminal: a character device other than the null
 * device (`> /dev/null`, the usual output of a benchmark or a cron job). Telling a terminal apart for certain takes
 * node's tty module, which costs the native executable more than a command (docs/development/native.md, "Start-up"); the
 * caller gives a "maybe" to the process's own stream, which knows. Throws if `fd` is closed.
 */
export function fdMayBeTerminal(fd: number): boolean {
  const stat = fs.fstatSync(fd)
  if (!stat.isCharacterDevice()) return false
  try {
    return stat.rdev !== fs.statSync('/dev/null').rdev
  } catch {
    return true
  }
}

/**
 * Points each of stdin, stdout and stderr that is a terminal which has hung up (a character device, not
 * /dev/null, that is no longer a tty) at /dev/null. Node restores the terminal's modes at exit and aborts
 * (SIGABRT, a core dump) when the terminal is gone; it leaves a descriptor the program reopened alone.
 */
export function releaseHungUpTerminals(isTerminal: (fd: number) => boolean): void {
  for (const fd of [0, 1, 2]) {
    try {
      if (!fdMayBeTerminal(fd) || isTerminal(fd)) continue
      fs.closeSync(fd)
      // The lowest free descriptor: the one just closed (those below it are open).
      fs.openSync('/dev/null', fd === 0 ? 'r' : 'w')
    } catch {}
  }
}

/** write(2) to a descriptor the process was given (its stdout, stderr): how many bytes went. */
export function writeToFd(fd: number, bytes: Uint8Array, offset: number): number {
  return fs.writeSync(fd, bytes, offset)
}

/** The same for text (UTF-8), without making a buffer of it first. */
export function writeTextToFd(fd: number, text: string): number {
  return fs.writeSync(fd, text)
}
