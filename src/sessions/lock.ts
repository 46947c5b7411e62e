import { linkSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { LockTimeoutError } from '../errors.js'
import { checkIdentity, identify } from '../process/identity.js'

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

export class FileLock {
  private released = false
  private constructor(
    readonly path: string,
    private readonly inode: number,
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
    const self = identify(process.pid)
    const content: LockContent = {
      pid: process.pid,
      start_time: self?.start_time ?? null,
      hostname: self?.hostname ?? '',
      boot_id: self?.boot_id ?? null,
      pid_namespace: self?.pid_namespace ?? null,
      acquired_at: new Date().toISOString(),
    }
    const temp = `${path}.${process.pid}.${uniqueSuffix()}.tmp`
    writeFileSync(temp, JSON.stringify(content), { mode: 0o600 })
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          linkSync(temp, path)
          return new FileLock(path, statSync(path).ino)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        }
        if (!breakIfStale(path, options.unverifiableStaleMs ?? DEFAULT_UNVERIFIABLE_STALE_MS)) return null
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
      if (statSync(this.path).ino === this.inode) unlinkSync(this.path)
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
 * The lock is moved aside first and its inode compared, so that two waiters breaking the same stale lock
 * never remove a fresh lock that a third process took in between.
 */
function breakIfStale(path: string, unverifiableStaleMs: number): boolean {
  let inode: number
  let holder: LockContent | null
  let ageMs: number
  try {
    const stat = statSync(path)
    inode = stat.ino
    ageMs = Date.now() - stat.mtimeMs
    holder = readLockContent(path)
  } catch {
    return true // vanished between link and stat: retry at once
  }
  if (holder) {
    const state = checkIdentity(holder)
    if (state === 'alive') return false
    if (state === 'unverifiable' && ageMs < unverifiableStaleMs) return false
  } else if (ageMs < 2000) {
    return false // unreadable content can only come from a foreign writer; give it a moment
  }
  const aside = `${path}.${process.pid}.${uniqueSuffix()}.stale`
  try {
    renameSync(path, aside)
  } catch {
    return true // someone else broke or released it
  }
  try {
    if (statSync(aside).ino !== inode) {
      // We moved a lock taken after our check: put it back.
      try {
        linkSync(aside, path)
      } catch {}
    }
  } finally {
    safeUnlink(aside)
  }
  return true
}

function readLockContent(path: string): LockContent | null {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>
    if (typeof value.pid !== 'number') return null
    return value as LockContent
  } catch {
    return null
  }
}

function describeHolder(path: string): string {
  const holder = readLockContent(path)
  return holder ? `process ${holder.pid} (since ${holder.acquired_at})` : 'another process'
}

/** Unique within this process (names also carry the pid); avoids loading node:crypto on every command. */
let counter = 0
export function uniqueSuffix(): string {
  counter += 1
  return `${Date.now().toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 0xffffff).toString(16)}`
}

function safeUnlink(path: string): void {
  try {
    unlinkSync(path)
  } catch {}
}
