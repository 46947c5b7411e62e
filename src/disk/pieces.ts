// Part of the door (disk/door.ts): staging folders and member files written, copied and hashed in pieces, for
// archive and unarchive. Sources are opened as the door opens any file (no link, no FIFO); new files are made
// exclusively, written whole, fsynced; a full disk is a DiskFaultError.

import * as fs from 'node:fs'
import { join } from 'node:path'
import { hashOf } from '../digest.js'
import { asDiskFault } from '../durable.js'
import { checkParents, closeFd, ensureDir, lstatOrNull, openPlain, unlinkQuiet, writeAll } from './open.js'

const { constants } = fs

const NEW_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/** Creates a file that must not exist yet (0600, never through a link) and returns its fd for writeAll. */
export function createNewFile(path: string): number {
  checkParents(path)
  try {
    return fs.openSync(path, NEW_FILE_FLAGS, 0o600)
  } catch (error) {
    throw asDiskFault(error, path)
  }
}

/** fsyncs and closes a file made by createNewFile (the fd is closed whatever happens). */
export function syncAndClose(fd: number, path: string): void {
  try {
    fs.fsyncSync(fd)
  } catch (error) {
    throw asDiskFault(error, path)
  } finally {
    closeFd(fd)
  }
}

/** Copies a plain file (never through a link) to a new file, in 64 KiB pieces, fsynced; no partial copy is left. */
export function copyPlainFileNew(from: string, to: string): void {
  const { fd: source } = openPlain(from)
  let target: number | null = null
  try {
    target = createNewFile(to)
    const buffer = Buffer.allocUnsafe(64 * 1024)
    for (;;) {
      const n = fs.readSync(source, buffer, 0, buffer.length, null)
      if (n === 0) break
      writeAll(target, buffer.subarray(0, n), to)
    }
    const fd = target
    target = null
    syncAndClose(fd, to)
  } catch (error) {
    if (target !== null) closeFd(target)
    unlinkQuiet(to)
    throw error
  } finally {
    closeFd(source)
  }
}

/** sha256 and size of a plain file, read in pieces (never through a link). */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const hash = hashOf('sha256')
  const { fd } = openPlain(path)
  let size = 0
  try {
    const buffer = Buffer.allocUnsafe(256 * 1024)
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null)
      if (n === 0) break
      hash.update(buffer.subarray(0, n))
      size += n
    }
  } finally {
    closeFd(fd)
  }
  return { sha256: hash.digest('hex'), size }
}

/** Every plain file under `dir`, as sorted paths relative to it (links and other kinds are left out, never followed). */
export function filesUnder(dir: string, prefix = ''): string[] {
  const files: string[] = []
  const here = prefix ? join(dir, prefix) : dir
  const stat = lstatOrNull(here)
  if (!stat?.isDirectory()) return files
  for (const name of fs.readdirSync(here).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name
    const kind = lstatOrNull(join(dir, rel))
    if (kind?.isDirectory()) files.push(...filesUnder(dir, rel))
    else if (kind?.isFile()) files.push(rel)
  }
  return files
}

/** A new folder `<parent>/<prefix><random>` (0700), `parent` made and checked first. */
export function makeStagingDir(parent: string, prefix: string): string {
  ensureDir(parent)
  try {
    return fs.mkdtempSync(join(parent, prefix))
  } catch (error) {
    throw asDiskFault(error, parent)
  }
}

/** A readable stream of a plain file opened by openPlain (the stream closes the fd). */
export function readStreamOf(path: string): NodeJS.ReadableStream & { destroy(): void } {
  const { fd } = openPlain(path)
  return fs.createReadStream('', { fd, autoClose: true, highWaterMark: 64 * 1024 })
}
