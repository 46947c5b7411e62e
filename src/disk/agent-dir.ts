// Reading a folder an agent wrote (SPEC §10, "What comes back from an agent is input"): a container's private
// clone, a bundle and files a remote job sends back. Every folder from the top down is opened held (a link in a
// folder's place is never followed), every file opened without following a link and without blocking, and its
// type checked before a byte is read: a FIFO, socket, device or link is refused at once (UNSAFE_FILE, or
// skipped where the caller says so), a file over its bound is refused. Part of the door (disk/door.ts).

import * as fs from 'node:fs'
import { join } from 'node:path'
import { asDiskFault } from '../durable.js'
import { HeldDir } from './held.js'
import { ensureDir, kindOf, READ_FLAGS, UnsafeFileError, writeAll } from './open.js'

const { constants } = fs
const NEW_FILE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW

/** The folders of `rel` below `top`, held one by one; null when one is missing. A link on the way is refused. */
function holdChain(top: string, parts: string[]): HeldDir[] | null {
  const chain = [HeldDir.open(top)]
  try {
    for (const part of parts) {
      if (part === '' || part === '.' || part === '..')
        throw new UnsafeFileError(join(top, ...parts), 'not a plain path')
      try {
        chain.push((chain[chain.length - 1] as HeldDir).child(part))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
          for (const held of chain) held.close()
          return null
        }
        throw error
      }
    }
    return chain
  } catch (error) {
    for (const held of chain) held.close()
    throw error
  }
}

/** Opens entry `name` of a held folder as a plain file (a link, FIFO, device or folder is refused at once). */
function openEntry(folder: HeldDir, name: string, shown: string): { fd: number; size: number } | null {
  let fd: number
  try {
    fd = fs.openSync(folder.entry(name), READ_FLAGS)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    if (code === 'ELOOP') throw new UnsafeFileError(shown, 'a symlink', 'SYMLINK_REFUSED')
    throw error
  }
  const stat = fs.fstatSync(fd)
  if (!stat.isFile()) {
    fs.closeSync(fd)
    throw new UnsafeFileError(shown, kindOf(stat))
  }
  return { fd, size: stat.size }
}

/**
 * The bytes of the plain file at `rel` ('/'-separated) below the folder `top` an agent wrote, at most `limit` of
 * them; null when it (or a folder on the way) is missing. A link anywhere on the way, a FIFO, a device or a file
 * over `limit` is an UnsafeFileError, at once: nothing blocks, nothing is followed.
 */
export function readAgentFile(top: string, rel: string, limit: number): Buffer | null {
  const parts = rel.split('/')
  const name = parts.pop() ?? ''
  const shown = join(top, rel)
  const chain = holdChain(top, parts)
  if (!chain) return null
  try {
    const opened = openEntry(chain[chain.length - 1] as HeldDir, name, shown)
    if (!opened) return null
    try {
      if (opened.size > limit) throw new UnsafeFileError(shown, `over ${limit} bytes`, 'FILE_TOO_BIG')
      const buffer = Buffer.allocUnsafe(limit + 1)
      let total = 0
      for (let n = 1; n > 0 && total <= limit; total += n) {
        n = fs.readSync(opened.fd, buffer, total, buffer.length - total, null)
      }
      if (total > limit) throw new UnsafeFileError(shown, `over ${limit} bytes`, 'FILE_TOO_BIG')
      return buffer.subarray(0, total)
    } finally {
      fs.closeSync(opened.fd)
    }
  } finally {
    for (const held of chain) held.close()
  }
}

/**
 * Copies the plain files below the folder `top` an agent wrote that `wanted` accepts (by their '/'-separated
 * path) into the new folder `to`, folders that `wanted` accepts (with a trailing '/') walked held. Anything else
 * is left: a link, FIFO, device or socket is never opened. Returns how many files were copied. A full disk is a
 * DiskFaultError.
 */
export function copyAgentFiles(top: string, to: string, wanted: (rel: string) => boolean): number {
  const root = holdChain(top, [])
  if (!root) return 0
  let copied = 0
  const walk = (folder: HeldDir, rel: string) => {
    for (const name of folder.names()) {
      const path = `${rel}${name}`
      const stat = fs.lstatSync(folder.entry(name), { throwIfNoEntry: false })
      if (stat?.isDirectory() && wanted(`${path}/`)) {
        const child = folder.child(name)
        try {
          walk(child, `${path}/`)
        } finally {
          child.close()
        }
      } else if (stat?.isFile() && wanted(path)) {
        copyEntry(folder, name, join(top, path), join(to, path))
        copied++
      }
    }
  }
  try {
    walk(root[0] as HeldDir, '')
  } finally {
    root[0]?.close()
  }
  return copied
}

function copyEntry(folder: HeldDir, name: string, shown: string, target: string): void {
  const opened = openEntry(folder, name, shown)
  if (!opened) return
  try {
    ensureDir(join(target, '..'))
    let out: number
    try {
      out = fs.openSync(target, NEW_FILE, 0o600)
    } catch (error) {
      throw asDiskFault(error, target)
    }
    try {
      const buffer = Buffer.allocUnsafe(256 * 1024)
      for (let n = fs.readSync(opened.fd, buffer); n > 0; n = fs.readSync(opened.fd, buffer)) {
        writeAll(out, buffer.subarray(0, n), target)
      }
    } finally {
      fs.closeSync(out)
    }
  } finally {
    fs.closeSync(opened.fd)
  }
}
