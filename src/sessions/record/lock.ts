import { createExclusive, linkFile, lstatOrNull, readText, unlinkQuiet } from '../../disk/door.js'
import { asDiskFault } from '../../durable.js'
import { LockTimeoutError } from '../../errors.js'
import { checkIdentity, selfIdentity } from '../../process/identity.js'

/**
 * A cross-process lock file that is broken as soon as its holder is verifiably dead.
 *
 * Why not proper-lockfile: its staleness is mtime-based, so a holder killed by SIGKILL blocks everyone for
 * its stale period (10 s by default). Here the lock file holds the holder's pid, start time, host, boot id and
 * pid namespace; a waiter that finds the holder dead (or its pid reused) removes the lock at once.
 *
 * The lock file appears with its content already written (temp file + link), so a reader never sees an
 * empty or half-written lock.
 */
export interface LockOptions {
  /** How long to keep retrying a lock held by a live process. */
  timeoutMs?: number
  /** A lock whose holder cannot be verified (another host, unreadable) is broken after this age. */
  unverifiableStaleMs?: number
  /** Describes the locked thing in errors, e.g. 'session "3f9a12c8"'. */
  what?: string
}

interface LockContent {
  pid: number
  start_time: string | null
  hostname: string
  boot_id: string | null
  pid_namespace: string | null
  acquired_at: string
}

const DEFAULT_TIMEOUT_MS = 5000
const DEFAULT_UNVERIFIABLE_STALE_MS = 30_000
/** Each generation is used up only by a breaker killed mid-break, within microseconds. */
const MAX_GUARD_GENERATIONS = 16

export class FileLock {
  private released = false
  private constructor(
    readonly path: string,
    private readonly inode: number,
    private readonly content: string,
  ) {}

  static async acquire(path: string, options: LockOptions = {}): Promise<FileLock> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const deadline = Date.now() + timeoutMs
    let delay = 2
    for (;;) {
      const lock = FileLock.tryAcquire(path, options)
      if (lock) return lock
      if (Date.now() >= deadline) throw new LockTimeoutError(options.what ?? path, describeHolder(path))
      await new Promise((resolve) => setTimeout(resolve, delay + Math.random() * delay))
      delay = Math.min(delay * 2, 25)
    }
  }

  /** One attempt: takes the lock, or breaks a dead holder's lock and takes it, or returns null when busy. */
  static tryAcquire(path: string, options: LockOptions = {}): FileLock | null {
    const self = selfIdentity()
    const content: LockContent = {
      pid: process.pid,
      start_time: self?.start_time ?? null,
      hostname: self?.hostname ?? '',
      boot_id: self?.boot_id ?? null,
      pid_namespace: self?.pid_namespace ?? null,
      acquired_at: new Date().toISOString(),
    }
    const text = JSON.stringify(content)
    const temp = `${path}.${process.pid}.${uniqueSuffix()}.tmp`
    try {
      createExclusive(temp, text)
    } catch (error) {
      // A full or read-only disk: leave no temp file behind, say what happened.
      safeUnlink(temp)
      throw asDiskFault(error, path)
    }
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          linkFile(temp, path)
          return new FileLock(path, lstatOrNull(path)?.ino ?? -1, text)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        }
        if (!breakIfStale(path, temp, options.unverifiableStaleMs ?? DEFAULT_UNVERIFIABLE_STALE_MS))
          return null
      }
      return null
    } finally {
      safeUnlink(temp)
    }
  }

  /** Releases the lock if it is still ours (it may have been broken by someone who judged us dead). */
  release(): void {
    if (this.released) return
    this.released = true
    try {
      // Inode and content: a file system may give a freed inode number to the very next file.
      const now = inspect(this.path)
      if (now?.ino === this.inode && now.text === this.content) unlinkQuiet(this.path)
    } catch {}
  }
}

/** Runs `fn` while holding the lock at `path`. */
export async function withLock<T>(path: string, options: LockOptions, fn: () => Promise<T> | T): Promise<T> {
  const lock = await FileLock.acquire(path, options)
  try {
    return await fn()
  } finally {
    lock.release()
  }
}

/**
 * Removes the lock at `path` if its holder is verifiably gone. Returns true when the caller should retry.
 *
 * Breakers of one lock file take turns through a guard file named after that file (its holder's pid, its
 * acquisition time, its inode), made with link(2) from the caller's lock temp file, so the guard names its
 * live holder. Under the guard the lock file is checked again (same inode, same content) and only then
 * removed: nobody but a guard holder removes a dead holder's lock, so it cannot change in between, and a
 * waiter that judged an older lock file never removes a newer one. Removing by name after a rename-aside
 * instead lets a third waiter take the lock while it is aside, and two processes then hold it.
 * A guard whose holder died (killed while breaking) is never removed while it matters: the next breaker
 * takes the next generation of it.
 */
function breakIfStale(path: string, temp: string, unverifiableStaleMs: number): boolean {
  const seen = inspect(path)
  if (!seen) return true // vanished between link and stat: retry at once
  if (!isStale(seen, unverifiableStaleMs)) return false
  const since = seen.holder ? Date.parse(seen.holder.acquired_at) || 0 : Math.floor(seen.mtimeMs)
  // `<lock>.<pid>.` like the lock's temp files: once that pid is dead, the store sweeps leftovers.
  const base = `${path}.${seen.holder?.pid ?? 0}.${since}-${seen.ino}`
  for (let generation = 0; generation < MAX_GUARD_GENERATIONS; generation++) {
    const guard = `${base}.${generation}.break`
    try {
      linkFile(temp, guard)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const breaker = inspect(guard)
      if (breaker && !isStale(breaker, unverifiableStaleMs)) return false // another waiter is breaking it
      continue
    }
    try {
      const now = inspect(path)
      if (now && now.ino === seen.ino && now.text === seen.text) unlinkQuiet(path)
    } finally {
      // The judged lock file is gone now, so its guards (ours and dead breakers') mean nothing any more.
      for (let g = 0; g <= generation; g++) safeUnlink(`${base}.${g}.break`)
    }
    return true
  }
  return false
}

interface LockFileState {
  ino: number
  mtimeMs: number
  text: string | null
  holder: LockContent | null
}

function inspect(path: string): LockFileState | null {
  const stat = lstatOrNull(path)
  if (!stat) return null
  let text: string | null = null
  // Through the door: a lock planted as a FIFO, a device or a link is never opened (its content is "unreadable").
  try {
    if (stat.isFile()) text = readText(path, 'lock')
  } catch {}
  return { ino: stat.ino, mtimeMs: stat.mtimeMs, text, holder: text === null ? null : parseLockContent(text) }
}

/** Whether a lock (or a breaker's guard) file's holder is gone: verifiably, or unverifiable for too long. */
function isStale(state: LockFileState, unverifiableStaleMs: number): boolean {
  const ageMs = Date.now() - state.mtimeMs
  if (!state.holder) return ageMs >= 2000 // unreadable content can only come from a foreign writer
  const check = checkIdentity(state.holder)
  if (check === 'alive') return false
  return check === 'dead' || ageMs >= unverifiableStaleMs
}

function parseLockContent(text: string): LockContent | null {
  try {
    const value = JSON.parse(text) as Partial<LockContent>
    if (typeof value.pid !== 'number') return null
    return value as LockContent
  } catch {
    return null
  }
}

function describeHolder(path: string): string {
  const holder = inspect(path)?.holder
  return holder ? `process ${holder.pid} (since ${holder.acquired_at})` : 'another process'
}

/** Unique within this process (names also carry the pid); avoids loading node:crypto on every command. */
let counter = 0
export function uniqueSuffix(): string {
  counter += 1
  return `${Date.now().toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 0xffffff).toString(16)}`
}

function safeUnlink(path: string): void {
  unlinkQuiet(path)
}
