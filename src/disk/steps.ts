// Part of the door (disk/door.ts re-exports it): the calls of the run's workspace, the removal engine's steps and
// the supervisor's reads of the agent's log, moved here as they were (each comment says whether it follows a link).

import * as fs from 'node:fs'
import { join } from 'node:path'
import { removeHeldSync } from './held.js'
import { checkParents, closeFd, lstatOrNull, openPlain, unlinkQuiet, writeAll } from './open.js'
import { chmodDir } from './paths.js'
// ---- Worktree folders of runs (sessions/run/workspace.ts) ------------------------------------------------------
// A worktree lives under the configured worktree root, which may itself be reached through a link the user
// made (a root on another disk): making the root follows links, as git does when it makes the worktree there,
// except inside `.harness/`, where a link is refused like everywhere else. The worktree folder itself, and any
// folder a record names, is never followed.

/**
 * Makes `dir` (a worktree root) and the missing folders above it, with `mode` (0700: prompts and copied secrets
 * live there). Follows a link the user made to or above the root; a folder of `.harness/` on the way that is a
 * link (or not a folder) is refused (SYMLINK_REFUSED), as ensureDir does.
 */
export function makeDirs(dir: string, mode: number): void {
  // Before (nothing is made through a link) and after (a folder swapped for one meanwhile).
  checkParents(join(dir, 'x'))
  fs.mkdirSync(dir, { recursive: true, mode })
  checkParents(join(dir, 'x'))
}

/**
 * Sets the permission bits of folder `path` (a worktree git made 0755, or one a record names) through a
 * no-follow open of it: a link planted in its place is refused (SYMLINK_REFUSED), its target left as it was.
 */
export function setMode(path: string, mode: number): void {
  chmodDir(path, mode)
}

/**
 * Sets the permission bits of a plain file through a no-follow open of it (a link, FIFO or device in its place is
 * refused): a file another tool wrote with its own umask (a git bundle) closed to everyone else.
 */
export function setFileMode(path: string, mode: number): void {
  const { fd } = openPlain(path)
  try {
    fs.fchmodSync(fd, mode)
  } finally {
    closeFd(fd)
  }
}

/**
 * Whether `path` is a real folder with nothing in it (false when it cannot be read). A link in its place is not
 * followed, whatever it points to: it is not an empty folder (a record's worktree folder, a folder under the
 * worktree root).
 */
export function isEmptyFolder(path: string): boolean {
  if (!lstatOrNull(path)?.isDirectory()) return false
  try {
    return fs.readdirSync(path).length === 0
  } catch {
    return false
  }
}

// ---- The removal engine's steps (sessions/removal/executor.ts) --------------------------------------------------

/** Unlinks a file or link (never what a link points to): true if it was there, false if it was not. */
export async function unlinkIfThere(path: string): Promise<boolean> {
  return fs.promises.unlink(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false
      throw error
    },
  )
}

/** rmdir(2): removes an empty folder (not a link); throws ENOENT when it is gone, ENOTEMPTY when it is not empty. */
export function removeEmptyFolder(path: string): void {
  fs.rmdirSync(path)
}

/** Removes a folder the removal plan named and everything in it (an agent's folder under `.harness/`). */
export function removeFolderTree(path: string): void {
  // Emptied through the folder it opened (held.ts): a folder swapped for a link mid-removal deletes nothing
  // outside, and a link in the folder's place is removed as a link.
  removeHeldSync(path)
}

// ---- The agent's log, read by its supervisor through the descriptor it opened (sessions/run/agent-log.ts) -----

/** The size of the file open at `fd`. */
export function fdSize(fd: number): number {
  return fs.fstatSync(fd).size
}

/** Reads up to `length` bytes at `position` of the file open at `fd` into `buffer`; how many were read. */
export function readInto(fd: number, buffer: Buffer, length: number, position: number): number {
  return fs.readSync(fd, buffer, 0, length, position)
}

// ---- The agent's log and the room held beside it (sessions/run/runner.ts) -----------------------------------

const LOG_FLAGS = fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW
const ZEROS_FLAGS =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW

/** Opens (or makes, 0600) a run's log for the agent to append to: never through a link, only a plain file. */
export function openLogForAppend(path: string): number {
  return openPlain(path, LOG_FLAGS, 0o600).fd
}

/** Writes `size` zeros to `path` (made 0600, truncated, never through a link); false if it cannot be done. */
export function writeZerosFile(path: string, size: number): boolean {
  let fd: number | undefined
  try {
    fd = openPlain(path, ZEROS_FLAGS, 0o600).fd
    writeAll(fd, Buffer.alloc(size), path)
    return true
  } catch {
    unlinkQuiet(path)
    return false
  } finally {
    if (fd !== undefined) closeFd(fd)
  }
}
