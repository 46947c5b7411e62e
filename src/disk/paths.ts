// Looking at paths, making and removing folders, watching them: the door's calls that open no file's bytes.
// Each says whether it follows a link: only to find what is there, never to open, write or remove through it.
// Part of the door (disk/door.ts re-exports it).

import * as fs from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkParents, UnsafeFileError } from './open.js'

export type { BigIntStats, Dirent, FSWatcher, Stats } from 'node:fs'

/**
 * Whether anything is at `path`, following a link (existsSync): only to know, never to open it. For the user's
 * own paths (their repository, the worktree root they may reach through a link, git's files in a worktree, a
 * plain session's folder); a path under `.harness/` or one a record names as harness's own (a log, an agent's
 * folder, a worktree to make or remove) is asked with entryExists, which sees a link and never follows it.
 */
export function pathExists(path: string): boolean {
  return fs.existsSync(path)
}

/** Whether anything is at `path` itself (a link counts, never followed). */
export function entryExists(path: string): boolean {
  return fs.lstatSync(path, { throwIfNoEntry: false }) !== undefined
}

/** The canonical path (links resolved): to compare and record where things are, never to open by. */
export function realPath(path: string): string {
  return fs.realpathSync(path)
}

/** realpath(3) itself (it keeps the case a case-insensitive disk stores). */
export function realPathNative(path: string): string {
  return fs.realpathSync.native(path)
}

/** lstat with nanoseconds (git's clean check compares them); throws when nothing is there. */
export function lstatBig(path: string): fs.BigIntStats {
  return fs.lstatSync(path, { bigint: true })
}

/** lstat that throws when nothing is there (never follows). */
export function lstatPath(path: string): fs.Stats {
  return fs.lstatSync(path)
}

/** stat, following a link (only to find what is there, never to open it); throws when nothing is there. */
export function statPath(path: string): fs.Stats {
  return fs.statSync(path)
}

/**
 * The entries of a folder with their types (readdir's d_type: no syscall per entry), for walks over a
 * worktree's thousands of files. The caller walks only real folders (a link's type is a link).
 */
export function readDirEntries(dir: string): fs.Dirent[] {
  return fs.readdirSync(dir, { withFileTypes: true })
}

/** The names in a folder (throws ENOENT when missing); `.harness` paths are checked for links on the way. */
export function listDir(dir: string): string[] {
  checkParents(join(dir, 'x'))
  return fs.readdirSync(dir)
}

/** A new private folder (0700) with a random name: under the system's temp folder unless `parent` says. */
export function makeTempDir(prefix: string, parent = tmpdir()): string {
  return fs.mkdtempSync(join(parent, prefix))
}

/** rmdir of an empty folder (never follows a link: ENOTDIR); missing is fine unless `missingOk` is false. */
export function removeEmptyDir(path: string, missingOk = true): void {
  try {
    fs.rmdirSync(path)
  } catch (error) {
    if (!missingOk || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** Async rmdir of an empty folder (never follows a link); errors come back as they are. */
export function removeEmptyDirAsync(path: string): Promise<void> {
  return fs.promises.rmdir(path)
}

/** Async unlink of a file or link (never what a link points to); errors come back as they are. */
export function unlinkAsync(path: string): Promise<void> {
  return fs.promises.unlink(path)
}

/**
 * Copies a plain file to a new one: the source is opened without following a link (a FIFO, device or link is
 * refused), the target made exclusively (0600 unless `mode`; anything in its place is EEXIST).
 */
export function copyPlainFile(from: string, to: string, mode = 0o600): void {
  let source: number
  try {
    source = fs.openSync(from, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new UnsafeFileError(from, 'a symlink', 'SYMLINK_REFUSED')
    }
    throw error
  }
  try {
    const stat = fs.fstatSync(source)
    if (!stat.isFile()) throw new UnsafeFileError(from, 'not a plain file')
    checkParents(to)
    const target = fs.openSync(to, 'wx', mode)
    try {
      const buffer = Buffer.allocUnsafe(256 * 1024)
      for (let n = fs.readSync(source, buffer); n > 0; n = fs.readSync(source, buffer)) {
        for (let done = 0; done < n; ) done += fs.writeSync(target, buffer, done, n - done)
      }
    } finally {
      fs.closeSync(target)
    }
  } finally {
    fs.closeSync(source)
  }
}

/** chmod of a real folder, through a no-follow open of it (chmod(2) would follow a link planted in its place). */
export function chmodDir(path: string, mode: number): void {
  let fd: number
  try {
    fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw new UnsafeFileError(path, 'not a real folder (a symlink or a file)', 'SYMLINK_REFUSED')
    }
    throw error
  }
  try {
    fs.fchmodSync(fd, mode)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Watches a folder's entries (fs.watch, not keeping the process alive): `onName` gets each changed name. The
 * watch reads nothing; what a name holds is read through the door.
 */
export function watchDir(dir: string, onName: (name: string | null) => void): fs.FSWatcher {
  return fs.watch(dir, { persistent: false }, (_event, name) => onName(name))
}

/** Throws (EACCES and the like) unless this user may list, enter and write folder `dir`. */
export function assertUsableDir(dir: string): void {
  fs.accessSync(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK)
}

/**
 * Copies a file to a new path (COPYFILE_EXCL: anything at `to`, a link too, is EEXIST, never written through).
 * The source is followed: for the user's own untracked files (worktree.include), which may be links they made.
 */
export function copyFileNew(from: string, to: string): void {
  checkParents(to)
  fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL)
}
