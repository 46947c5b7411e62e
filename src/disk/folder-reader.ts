// Part of the door (disk/door.ts re-exports it): reading many files of one folder (a listing of session
// records) through one open handle of the folder.

import * as fs from 'node:fs'
import { join } from 'node:path'
import { HeldDir } from './held.js'
import { checkParents, type FileKind, kindOf, limitOf, READ_FLAGS, UnsafeFileError } from './open.js'

/**
 * A folder opened once, with its parents checked once, whose plain files are then read through the open
 * handle (`/proc/self/fd/<n>/<name>` on Linux): the same refusals as `readBytes` (no link followed, nothing but
 * a plain file, bounded), without an `lstat` of every parent for every file, and into one buffer of the
 * file's size rather than 64 KiB chunks joined. A listing of 10,000 records spent more on those checks and
 * copies than on reading. Where fd paths do not work, each read checks that the path still names the folder.
 */
export class FolderReader {
  /** One buffer for every read: the text is decoded out of it, so it is free again for the next file. */
  private scratch = Buffer.allocUnsafe(16 * 1024)

  private constructor(
    private readonly held: HeldDir,
    readonly dir: string,
  ) {}

  /** Null when `dir` does not exist. */
  static open(dir: string): FolderReader | null {
    checkParents(join(dir, 'x'))
    try {
      return new FolderReader(HeldDir.open(dir), dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }

  /** The text of plain file `name` of the folder; errors as `readBytes` gives them (ENOENT as it is). */
  readText(name: string, kind: FileKind | number): string {
    return this.read(name, kind).text
  }

  /** `readText`, with what `fstat` said of the file before it was read. */
  read(name: string, kind: FileKind | number): { text: string; stat: fs.Stats } {
    const limit = limitOf(kind)
    const shown = () => join(this.dir, name)
    let fd: number
    try {
      fd = fs.openSync(this.held.entry(name), READ_FLAGS)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ELOOP') throw new UnsafeFileError(shown(), 'a symlink', 'SYMLINK_REFUSED')
      if (code === 'ENXIO') throw new UnsafeFileError(shown(), 'a FIFO')
      throw error
    }
    try {
      const stat = fs.fstatSync(fd)
      if (!stat.isFile()) throw new UnsafeFileError(shown(), kindOf(stat))
      if (stat.size > limit) {
        throw new UnsafeFileError(shown(), `over ${limit} bytes (${stat.size})`, 'FILE_TOO_BIG')
      }
      const wanted = Math.min(stat.size + 1, limit + 1)
      if (this.scratch.length < wanted)
        this.scratch = Buffer.allocUnsafe(Math.max(wanted, this.scratch.length * 2))
      return { text: readUpTo(fd, this.scratch, limit, shown).toString('utf8'), stat }
    } finally {
      fs.closeSync(fd)
    }
  }

  /** What `lstat` says of entry `name` (a link as a link), or null when there is none. */
  stat(name: string): fs.Stats | null {
    return fs.lstatSync(this.held.entry(name), { throwIfNoEntry: false }) ?? null
  }

  close(): void {
    this.held.close()
  }
}

/**
 * The bytes of `fd` from where it stands, read into `first` (one read when it holds the whole file), more read on
 * if the file grew, to `limit`. The result may be a view of `first`.
 */
function readUpTo(fd: number, first: Buffer, limit: number, shown: () => string): Buffer {
  const chunks: Buffer[] = []
  let buffer = first
  let filled = 0
  let total = 0
  for (;;) {
    const n = fs.readSync(fd, buffer, filled, buffer.length - filled, null)
    if (n === 0) break
    filled += n
    total += n
    if (total > limit) throw new UnsafeFileError(shown(), `over ${limit} bytes`, 'FILE_TOO_BIG')
    if (filled === buffer.length) {
      chunks.push(buffer)
      buffer = Buffer.allocUnsafe(Math.min(64 * 1024, limit + 1 - total))
      filled = 0
    }
  }
  if (chunks.length === 0) return buffer.subarray(0, filled)
  chunks.push(buffer.subarray(0, filled))
  return Buffer.concat(chunks, total)
}
