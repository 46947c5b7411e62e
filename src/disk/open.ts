// Opening files (SPEC §10): nothing is followed through a symlink, what was opened is type-checked before a byte
// is read (a FIFO, socket, device or link is refused at once and never blocks), reads are bounded in size, temp
// files are created exclusively under random names, JSON is bounded in depth, and no error quotes bytes of a
// file. Part of the door (disk/door.ts re-exports it); node built-ins only, so the small entry can use it.

import * as fs from 'node:fs'
import { dirname, join, resolve, sep } from 'node:path'
import { asDiskFault, fsyncDir, writeNewFileDurably } from '../durable.js'
import { type ErrorCode, ExitCode, HarnessError } from '../errors.js'

const { constants } = fs
const MiB = 1024 * 1024

/** The most bytes read from each kind of file; more is refused as corrupt, never read on. */
export const LIMITS = {
  record: MiB,
  lock: MiB,
  stamp: MiB,
  config: MiB,
  chain: MiB,
  trust: MiB,
  /** A long prompt, kept beside its record (sessions/record/bounds.ts: at most 16 MiB are accepted). */
  prompt: 16 * MiB,
  /** An archive's manifest: one entry per session, so larger than a record. */
  manifest: 64 * MiB,
  /** A plan handed to a detached process, a `.git` file, git's own small files. */
  small: MiB,
  /** git's index of a worktree: one entry per tracked file (about 100 bytes each). */
  gitIndex: 1024 * MiB,
} as const

export type FileKind = keyof typeof LIMITS

/** The most bytes read for `kind`, or the number given in its place (a bound tighter than the kind's). */
export function limitOf(kind: FileKind | number): number {
  return typeof kind === 'number' ? kind : LIMITS[kind]
}

/** The deepest nesting a JSON file of harness may have (a record is about 4 levels deep). */
const MAX_JSON_DEPTH = 64

/** A file the door refuses to open: a link, a FIFO, a device, too big. Never quotes the file's bytes. */
export class UnsafeFileError extends HarnessError {
  constructor(
    readonly path: string,
    readonly reason: string,
    code: ErrorCode = 'UNSAFE_FILE',
  ) {
    super(
      code,
      `${path} is ${reason}: harness never follows links or opens anything but plain files in its folders`,
      ExitCode.IllegalState,
      'move it away (its target, if any, is left alone)',
    )
  }
}

/** A JSON text the door could not parse: says where, never what (the file may be a credential a link reached). */
export class JsonTextError extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
const APPEND_FLAGS =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK

/** What a non-file is called in a refusal. */
export function kindOf(stat: fs.Stats): string {
  if (stat.isSymbolicLink()) return 'a symlink'
  if (stat.isFIFO()) return 'a FIFO'
  if (stat.isSocket()) return 'a socket'
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device'
  if (stat.isDirectory()) return 'a folder'
  return 'not a plain file'
}

/** Opens a plain file for reading without following a link and without blocking (a FIFO is refused). */
export function openPlain(
  path: string,
  flags: number = READ_FLAGS,
  mode?: number,
): { fd: number; stat: fs.Stats } {
  checkParents(path)
  let fd: number
  try {
    fd = fs.openSync(path, flags, mode)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // ELOOP: the last component is a link (O_NOFOLLOW). ENXIO: a FIFO without a writer (O_WRONLY|O_NONBLOCK).
    if (code === 'ELOOP') throw new UnsafeFileError(path, 'a symlink', 'SYMLINK_REFUSED')
    if (code === 'ENXIO') throw new UnsafeFileError(path, 'a FIFO')
    throw error
  }
  let stat: fs.Stats
  try {
    stat = fs.fstatSync(fd)
  } catch (error) {
    fs.closeSync(fd)
    throw error
  }
  if (!stat.isFile()) {
    fs.closeSync(fd)
    throw new UnsafeFileError(path, kindOf(stat))
  }
  return { fd, stat }
}

/**
 * The bytes of a plain file, at most `LIMITS[kind]` of them (more is refused: the file is corrupt).
 * ENOENT and other errno errors come back as they are; a link, FIFO, device or oversize file is an
 * UnsafeFileError.
 */
export function readBytes(path: string, kind: FileKind | number): Buffer {
  const limit = limitOf(kind)
  const { fd, stat } = openPlain(path)
  try {
    if (stat.size > limit)
      throw new UnsafeFileError(path, `over ${limit} bytes (${stat.size})`, 'FILE_TOO_BIG')
    // Room for the size it has (and one byte to see it grow), then 64 KiB more at a time: reading a small file
    // into 64 KiB pieces made the native executable's collector run several times in one command.
    let buffer = Buffer.allocUnsafe(Math.min(stat.size, limit) + 1)
    let total = 0
    for (;;) {
      if (total === buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(buffer.length + 64 * 1024, limit + 1))
        buffer.copy(grown, 0, 0, total)
        buffer = grown
      }
      const n = fs.readSync(fd, buffer, total, buffer.length - total, null)
      if (n === 0) break
      total += n
      if (total > limit) throw new UnsafeFileError(path, `over ${limit} bytes`, 'FILE_TOO_BIG')
    }
    return buffer.subarray(0, total)
  } finally {
    fs.closeSync(fd)
  }
}

export function readText(path: string, kind: FileKind | number): string {
  return readBytes(path, kind).toString('utf8')
}

/** The parsed JSON of a plain file (readBytes, then parseJson: a JsonTextError that quotes nothing). */
export function readJson(path: string, kind: FileKind): unknown {
  return parseJson(readText(path, kind))
}

/**
 * JSON.parse, bounded in depth (a text nested deeper than `maxDepth` is refused before the parser sees it, so
 * no stack overflows), whose error says where the text is wrong but never quotes it.
 */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  const depth = jsonDepthOver(text, maxDepth)
  if (depth !== -1) throw new JsonTextError(`nested deeper than ${maxDepth} levels (at character ${depth})`)
  try {
    return JSON.parse(text)
  } catch (error) {
    const at = /position (\d+)/.exec((error as Error).message)?.[1]
    throw new JsonTextError(at === undefined ? 'not valid JSON' : `not valid JSON (at character ${at})`)
  }
}

/** The index at which nesting (outside strings) first exceeds `max`, or -1. */
function jsonDepthOver(text: string, max: number): number {
  // Fewer opening brackets than the limit cannot nest deeper: counted by the runtime's own search, so that a
  // record of a long text (a shipped one of a megabyte) is not walked character by character.
  let opening = 0
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1 && opening <= max; at = text.indexOf(bracket, at + 1))
      opening++
  }
  if (opening <= max) return -1
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return i
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return -1
}

/** A random, unguessable suffix for a temp file (with the pid, so a leftover's writer can be told dead). */
export function tempName(path: string, suffix = '.tmp'): string {
  // Web crypto's global is loaded on first use: commands that write nothing pay nothing for it.
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(6))
  return `${path}.${process.pid}-${Buffer.from(bytes).toString('hex')}${suffix}`
}

/**
 * Replaces `path` atomically: the bytes go to a temp file made exclusively (O_CREAT|O_EXCL, which never
 * follows a link) under a random name beside it, fsynced, renamed over `path` (rename replaces a link
 * planted at `path`, never writes through it). Disk faults are DiskFaultErrors; no temp file is left.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, temp = tempName(path)): void {
  checkParents(path)
  writeNewFileDurably(temp, data)
  try {
    fs.renameSync(temp, path)
  } catch (error) {
    unlinkQuiet(temp)
    throw asDiskFault(error, path)
  }
  fsyncDir(dirname(path))
}

/** Writes a file that must not exist yet (exclusive: a link or any file in its place is EEXIST). */
export function writeFileNew(path: string, data: string | Uint8Array): void {
  checkParents(path)
  writeNewFileDurably(path, data)
}

/**
 * Creates a small file that must not exist yet (O_CREAT|O_EXCL, 0600: a link or anything in its place is EEXIST),
 * without fsync: a lock's or a claim's content, or a temp index, which mean nothing after a crash.
 */
export function createExclusive(path: string, data: string | Uint8Array): void {
  checkParents(path)
  fs.writeFileSync(path, data, { mode: 0o600, flag: 'wx' })
}

/** link(2): `to` is made, never replaced (EEXIST); neither name is followed. */
export function linkFile(from: string, to: string): void {
  fs.linkSync(from, to)
}

/** Appends to a plain file (made 0600 if missing), never through a link, never to a FIFO or device. */
export function appendText(path: string, text: string): void {
  const { fd } = openPlain(path, APPEND_FLAGS, 0o600)
  try {
    writeAll(fd, Buffer.from(text, 'utf8'), path)
  } finally {
    fs.closeSync(fd)
  }
}

/** Writes every byte (a short write is continued); a full disk is a DiskFaultError. */
export function writeAll(fd: number, bytes: Uint8Array, path: string): void {
  try {
    let offset = 0
    while (offset < bytes.length) {
      const n = fs.writeSync(fd, bytes, offset, bytes.length - offset)
      if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'ENOSPC' })
      offset += n
    }
  } catch (error) {
    throw asDiskFault(error, path)
  }
}

/** Opens a plain file for reading (for a stream: a log); the fd and its size are the caller's. */
export function openRead(path: string): { fd: number; size: number } {
  const { fd, stat } = openPlain(path)
  // Reads of a regular file never block; the flag only mattered for the open of a FIFO.
  return { fd, size: stat.size }
}

/** Up to `length` bytes of an open file from `position`; `close` closes the fd after. */
export function readBytesAt(fd: number, length: number, position: number, close = false): Buffer {
  try {
    const buffer = Buffer.alloc(length)
    let total = 0
    while (total < length) {
      const n = fs.readSync(fd, buffer, total, length - total, position + total)
      if (n === 0) break
      total += n
    }
    return buffer.subarray(0, total)
  } finally {
    if (close) fs.closeSync(fd)
  }
}

/** Closes an fd the door opened for the caller. */
export function closeFd(fd: number): void {
  try {
    fs.closeSync(fd)
  } catch {}
}

/** What a link says (never followed). */
export function readLinkText(path: string): string {
  return fs.readlinkSync(path)
}

/** Unlinks a file or link (never what a link points to); missing is fine. */
export async function unlinkFile(path: string): Promise<void> {
  await fs.promises.unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error
  })
}

/** lstat, or null when nothing is there. */
export function lstatOrNull(path: string): fs.Stats | null {
  return fs.lstatSync(path, { throwIfNoEntry: false }) ?? null
}

/** stat (following a link: only to find what is there, never to open it), or null when nothing is there. */
export function statOrNull(path: string): fs.Stats | null {
  try {
    return fs.statSync(path, { throwIfNoEntry: false }) ?? null
  } catch {
    return null
  }
}

/** The names in a real folder ([] when it is missing); a link in its place is refused. */
export function readDirNames(dir: string): string[] {
  assertRealDir(dir, true)
  try {
    return fs.readdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
}

export function unlinkQuiet(path: string): void {
  try {
    fs.unlinkSync(path)
  } catch {}
}

/** Renames within harness's folders (rename never follows a link: one at `from` moves, one at `to` is replaced). */
export function renameFile(from: string, to: string): void {
  checkParents(from)
  checkParents(to)
  fs.renameSync(from, to)
}

/**
 * Makes `dir` and each missing folder above it (0700 unless `mode` says), and checks that every folder from `.harness` down is a
 * real folder, not a link: a link planted anywhere on the way is refused (SYMLINK_REFUSED, exit 4).
 */
export function ensureDir(dir: string, mode = 0o700): void {
  const abs = resolve(dir)
  try {
    fs.mkdirSync(abs, { recursive: true, mode })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw asDiskFault(error, abs)
  }
  checkParents(join(abs, 'x'))
}

/** Throws unless `dir` is a real folder (or, with `missingOk`, absent). */
export function assertRealDir(dir: string, missingOk = false): void {
  const stat = lstatOrNull(dir)
  if (!stat) {
    if (missingOk) return
    throw Object.assign(new Error(`ENOENT: ${dir}`), { code: 'ENOENT' })
  }
  if (!stat.isDirectory()) {
    throw new UnsafeFileError(
      dir,
      stat.isSymbolicLink() ? 'a symlink' : kindOf(stat),
      stat.isSymbolicLink() ? 'SYMLINK_REFUSED' : 'UNSAFE_FILE',
    )
  }
}

/**
 * Every folder of `path` from its `.harness` folder down is a real folder (absent ones are fine: an open will
 * say ENOENT). Paths outside `.harness` are checked only by the no-follow open of their last part.
 */
export function checkParents(path: string): void {
  const abs = resolve(path)
  const parts = abs.split(sep)
  const top = parts.lastIndexOf('.harness')
  if (top === -1 || top === parts.length - 1) return
  for (let i = top; i < parts.length - 1; i++) {
    const dir = parts.slice(0, i + 1).join(sep) || sep
    const stat = lstatOrNull(dir)
    if (!stat) return
    if (!stat.isDirectory()) {
      throw new UnsafeFileError(
        dir,
        stat.isSymbolicLink() ? 'a symlink' : kindOf(stat),
        stat.isSymbolicLink() ? 'SYMLINK_REFUSED' : 'UNSAFE_FILE',
      )
    }
  }
}

// ---- A file's mode, and reads and writes through a descriptor (the agent's log, the room held beside it) -----

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

/** The size of the file open at `fd`. */
export function fdSize(fd: number): number {
  return fs.fstatSync(fd).size
}

/** Reads up to `length` bytes at `position` of the file open at `fd` into `buffer`; how many were read. */
export function readInto(fd: number, buffer: Buffer, length: number, position: number): number {
  return fs.readSync(fd, buffer, 0, length, position)
}

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
