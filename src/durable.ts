import * as fs from 'node:fs'
import { dirname } from 'node:path'
import { DiskFaultError } from './errors.js'

/**
 * The calls the durable writer makes; a test injects one that writes short or fails
 * (docs/development/design.md).
 */
export interface WriteFs {
  openSync(path: string, flags: string, mode?: number): number
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number
  fsyncSync(fd: number): void
  closeSync(fd: number): void
  renameSync(from: string, to: string): void
  linkSync(from: string, to: string): void
  unlinkSync(path: string): void
}

export const realFs: WriteFs = fs

/**
 * Writes every byte of `data` to a new file (`wx`, 0600) and fsyncs it. A short write is continued where it
 * stopped, never taken for the whole; a write that makes no progress or fails removes the file and throws
 * (a DiskFaultError for ENOSPC, EDQUOT, EROFS, EIO).
 */
export function writeNewFileDurably(path: string, data: string | Uint8Array, io: WriteFs = realFs): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  let fd: number
  try {
    fd = io.openSync(path, 'wx', 0o600)
  } catch (error) {
    throw asDiskFault(error, path)
  }
  try {
    let offset = 0
    while (offset < bytes.length) {
      const written = io.writeSync(fd, bytes, offset, bytes.length - offset)
      // write(2) returning 0 for a regular file means it cannot take more: treat it as a full disk.
      if (written <= 0) throw Object.assign(new Error('write made no progress'), { code: 'ENOSPC' })
      offset += written
    }
    io.fsyncSync(fd)
  } catch (error) {
    safeClose(io, fd)
    safeUnlink(io, path)
    throw asDiskFault(error, path)
  }
  try {
    io.closeSync(fd)
  } catch (error) {
    safeUnlink(io, path)
    throw asDiskFault(error, path)
  }
}

/**
 * Replaces `path` atomically: the whole content goes to `temp` (same folder), is fsynced, renamed over `path`,
 * and the folder is fsynced. On any failure `temp` is gone and `path` is untouched.
 */
export function replaceFileDurably(
  path: string,
  temp: string,
  data: string | Uint8Array,
  io: WriteFs = realFs,
): void {
  writeNewFileDurably(temp, data, io)
  try {
    io.renameSync(temp, path)
  } catch (error) {
    safeUnlink(io, temp)
    throw asDiskFault(error, path)
  }
  fsyncDir(dirname(path))
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined
  try {
    fd = fs.openSync(dir, 'r')
    fs.fsyncSync(fd)
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

const DISK_FAULTS: Record<string, 'DISK_FULL' | 'READ_ONLY' | 'IO_ERROR'> = {
  ENOSPC: 'DISK_FULL',
  EDQUOT: 'DISK_FULL',
  EROFS: 'READ_ONLY',
  EIO: 'IO_ERROR',
}

/** The disk-fault error for an errno error (other errors come back as they are). */
export function asDiskFault(error: unknown, path: string): unknown {
  if (error instanceof DiskFaultError) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const kind = code ? DISK_FAULTS[code] : undefined
  return kind ? new DiskFaultError(kind, path, error) : error
}

function safeClose(io: WriteFs, fd: number): void {
  try {
    io.closeSync(fd)
  } catch {}
}

function safeUnlink(io: WriteFs, path: string): void {
  try {
    io.unlinkSync(path)
  } catch {}
}
