// Removal that holds the folder it checked (SPEC §10): a folder is opened once (O_NOFOLLOW|O_DIRECTORY) and its
// entries are removed relative to that open folder, so a folder swapped for a symlink mid-removal deletes
// nothing outside it. Part of the door (disk/door.ts re-exports it).

import * as fs from 'node:fs'
import { join } from 'node:path'
import { lstatOrNull, UnsafeFileError, unlinkQuiet } from './open.js'

const { constants } = fs

/** Linux names an open folder by `/proc/self/fd/<n>`: paths through it resolve in that folder, whatever the
 *  path it was opened by now names (openat and unlinkat, which node lacks). */
const FD_DIR = '/proc/self/fd'
let fdPathsWork: boolean | undefined

function heldPathsWork(): boolean {
  if (fdPathsWork === undefined) {
    try {
      fdPathsWork = fs.statSync(FD_DIR).isDirectory() && process.platform === 'linux'
    } catch {
      fdPathsWork = false
    }
  }
  return fdPathsWork
}

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/** An open folder, and the path through which its entries are reached relative to it. */
export class HeldDir {
  private constructor(
    readonly fd: number,
    /** `/proc/self/fd/<fd>` on Linux, else the path (checked again before each use). */
    readonly base: string,
    private readonly identity: { dev: number; ino: number } | null,
    private readonly path: string,
  ) {}

  /** Opens a real folder (a link in its place is refused: O_NOFOLLOW|O_DIRECTORY). */
  static open(path: string): HeldDir {
    return HeldDir.hold(path, path)
  }

  /**
   * Opens the real folder at `openPath` (O_NOFOLLOW|O_DIRECTORY: a link or file in its place is refused) and
   * holds it as `path`: with fd paths its entries are reached through the descriptor, else through `path`,
   * checked again against the folder's identity before each use.
   */
  private static hold(openPath: string, path: string): HeldDir {
    let fd: number
    try {
      fd = fs.openSync(openPath, DIR_FLAGS)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ELOOP' || code === 'ENOTDIR') {
        throw new UnsafeFileError(path, 'not a real folder (a symlink or a file)', 'SYMLINK_REFUSED')
      }
      throw error
    }
    if (heldPathsWork()) return new HeldDir(fd, `${FD_DIR}/${fd}`, null, path)
    const stat = fs.fstatSync(fd)
    return new HeldDir(fd, path, { dev: stat.dev, ino: stat.ino }, path)
  }

  /** The path of entry `name` of this very folder. */
  entry(name: string): string {
    if (name.includes('/') || name === '..' || name === '.') throw new Error(`not an entry name: ${name}`)
    if (this.identity) {
      // No fd paths: the folder's path must still name the folder that was opened.
      const now = lstatOrNull(this.path)
      if (!now?.isDirectory() || now.dev !== this.identity.dev || now.ino !== this.identity.ino) {
        throw new UnsafeFileError(this.path, 'no longer the folder that was checked', 'SYMLINK_REFUSED')
      }
    }
    return join(this.base, name)
  }

  /** Opens sub-folder `name` of this one (refused if it is a link). */
  child(name: string): HeldDir {
    return HeldDir.hold(this.entry(name), join(this.path, name))
  }

  names(): string[] {
    if (this.identity) this.entry('x') // checks that the path still names the held folder
    return fs.readdirSync(this.base)
  }

  /** Empties this very folder (every entry but `keep`), relative to the handle: see emptyDirHeld. */
  empty(keep: readonly string[] = []): Promise<void> {
    return runAsync(emptySteps(this, new Set(keep)))
  }

  close(): void {
    try {
      fs.closeSync(this.fd)
    } catch {}
  }
}

/**
 * Empties folder `dir` relative to the folder that was opened: every entry but `keep` goes, sub-folders
 * opened (never followed) and emptied the same way, so a folder swapped for a symlink mid-removal deletes
 * nothing outside (a link is removed as a link).
 */
export async function emptyDirHeld(dir: string, keep: readonly string[] = []): Promise<void> {
  const held = HeldDir.open(dir)
  try {
    await held.empty(keep)
  } finally {
    held.close()
  }
}

/** Removes `path` whatever it is: a file or link is unlinked (never followed), a real folder emptied held and removed. */
export function removeHeldSync(path: string): void {
  const stat = lstatOrNull(path)
  if (!stat) return
  if (!stat.isDirectory()) {
    unlinkQuiet(path)
    return
  }
  const held = HeldDir.open(path)
  try {
    runSync(emptySteps(held, new Set()))
  } finally {
    held.close()
  }
  const error = rmdirSync(path)
  if (error) throw error
}

// One walk serves the sync and the async removal: it yields the removals it needs and gets back their
// errors, and a driver does them, with the sync calls or with promises (a folder's files then in parallel,
// node's thread pool waiting on the file system for them together).

/** Unlink every path (each one's error, or null), or rmdir one. */
type Step = { unlink: string[] } | { rmdir: string }
type Outcome = (NodeJS.ErrnoException | null)[]

function* emptySteps(held: HeldDir, keep: ReadonlySet<string>): Generator<Step, void, Outcome> {
  const names = held.names().filter((n) => !keep.has(n))
  const errors = yield { unlink: names.map((name) => held.entry(name)) }
  const folders: string[] = []
  names.forEach((name, i) => {
    const error = errors[i]
    // EISDIR (Linux) / EPERM (macOS): a real folder; ENOENT: already gone.
    if (error?.code === 'EISDIR' || error?.code === 'EPERM') folders.push(name)
    else if (error && error.code !== 'ENOENT') throw error
  })
  for (const name of folders) {
    let child: HeldDir
    try {
      child = held.child(name)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue
      throw error
    }
    try {
      yield* emptySteps(child, new Set())
    } finally {
      child.close()
    }
    // rmdir never follows a link (ENOTDIR), and the entry path is relative to the held parent.
    const [error] = yield { rmdir: held.entry(name) }
    if (error) throw error
  }
}

function catchSync(action: () => void): NodeJS.ErrnoException | null {
  try {
    action()
    return null
  } catch (error) {
    return error as NodeJS.ErrnoException
  }
}

/** rmdir's error, ENOENT (already gone) taken as done. */
function rmdirSync(path: string): NodeJS.ErrnoException | null {
  const error = catchSync(() => fs.rmdirSync(path))
  return error?.code === 'ENOENT' ? null : error
}

function runSync(walk: Generator<Step, void, Outcome>): void {
  for (let step = walk.next([]); !step.done; ) {
    const { value } = step
    step = walk.next(
      'unlink' in value
        ? value.unlink.map((p) => catchSync(() => fs.unlinkSync(p)))
        : [rmdirSync(value.rmdir)],
    )
  }
}

async function runAsync(walk: Generator<Step, void, Outcome>): Promise<void> {
  const settle = (p: Promise<void>) =>
    p.then(
      () => null,
      (error: NodeJS.ErrnoException) => error,
    )
  for (let step = walk.next([]); !step.done; ) {
    const { value } = step
    const outcome =
      'unlink' in value
        ? await Promise.all(value.unlink.map((p) => settle(fs.promises.unlink(p))))
        : [await settle(fs.promises.rmdir(value.rmdir)).then((e) => (e?.code === 'ENOENT' ? null : e))]
    step = walk.next(outcome)
  }
}

/** What `removeFileBelow` found at the path. */
export type RemovedBelow = 'removed' | 'absent' | 'folder' | 'not-followed'

/**
 * Removes the file or link at `rel` ('/'-separated, below the real folder `top`) without following a link on
 * the way: each folder from `top` down is opened held (a link or a file in a folder's place: nothing is removed,
 * `not-followed`), the entry is removed relative to its held folder (a link as a link; a real folder is left,
 * `folder`), then the folders it leaves empty, deepest first, up to `top` (not included).
 */
export function removeFileBelow(top: string, rel: string): RemovedBelow {
  const parts = rel.split('/').filter((part) => part !== '' && part !== '.')
  const name = parts.pop()
  if (name === undefined || parts.includes('..') || name === '..') return 'not-followed'
  const chain = [HeldDir.open(top)]
  try {
    for (const part of parts) {
      try {
        chain.push((chain[chain.length - 1] as HeldDir).child(part))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent'
        if (error instanceof UnsafeFileError) return 'not-followed'
        throw error
      }
    }
    const folder = chain[chain.length - 1] as HeldDir
    const stat = lstatOrNull(folder.entry(name))
    if (!stat) return 'absent'
    if (stat.isDirectory()) return 'folder'
    unlinkQuiet(folder.entry(name))
    // The folders left empty, each relative to its held parent: a non-empty one ends the climb.
    for (let i = parts.length - 1; i >= 0; i--) {
      const parent = chain[i] as HeldDir
      if (catchSync(() => fs.rmdirSync(parent.entry(parts[i] as string)))) break
    }
    return 'removed'
  } finally {
    for (const held of chain) held.close()
  }
}

// ---- Single removals (the removal engine's steps) -----------------------------------------------------------

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
