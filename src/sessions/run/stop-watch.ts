import { type FSWatcher, lstatPath, type Stats, watchDir } from '../../disk/door.js'
import type { RecordStore as SessionStore } from '../ports.js'
import { lastRun } from '../record/liveness.js'
import type { SessionRecord, StopRequest } from '../record/schema.js'

/** The fallback poll: a watch event can be missed (network file systems, a full inotify table). */
export const STOP_POLL_MS = 200

export interface StopWatch {
  /** Stops watching; idempotent. */
  close(): void
}

/**
 * Watches run `runN` of session `id` for a committed stop_request, so that a stop is carried out even when the
 * `kill` or `pause` that wrote it died before signalling the supervisor (docs/security.md, "Stops that survive
 * their requester"). fs.watch on the sessions folder wakes it at once; a poll every STOP_POLL_MS is the
 * fallback. Either only stats the record file and reads it when its inode, size or mtime changed.
 * `onRequest` is called at most once. A record harness did not seal is never obeyed.
 */
export function watchStopRequest(
  store: SessionStore,
  id: string,
  runN: number,
  onRequest: (request: StopRequest) => void,
): StopWatch {
  const path = store.recordPath(id)
  let last = ''
  let closed = false
  let watcher: FSWatcher | undefined
  let timer: NodeJS.Timeout | undefined

  const close = () => {
    if (closed) return
    closed = true
    clearInterval(timer)
    try {
      watcher?.close()
    } catch {}
  }
  const check = () => {
    if (closed) return
    let stats: Stats
    try {
      stats = lstatPath(path)
    } catch {
      return // being replaced right now, or removed: the next event or poll looks again
    }
    const key = `${stats.ino}:${stats.size}:${stats.mtimeMs}`
    if (key === last) return
    last = key
    let record: SessionRecord | null
    try {
      record = store.get(id)
    } catch {
      return
    }
    const request = record ? requestFor(record, runN) : null
    if (!request) return
    close()
    onRequest(request)
  }

  try {
    watcher = watchDir(store.dir, (name) => {
      // Other sessions' writes wake us too; ours are `<id>.json` and its temp and lock files.
      if (name === null || String(name).startsWith(id)) check()
    })
    watcher.on('error', () => {}) // the poll carries on
  } catch {
    // No watch here (a file system without inotify): the poll alone.
  }
  timer = setInterval(check, STOP_POLL_MS)
  timer.unref()
  check()
  return { close }
}

/** The stop_request that applies to run `runN`: the record is sealed, RUNNING, and that run is its last. */
export function requestFor(record: SessionRecord, runN: number): StopRequest | null {
  if (record.sealed === false || record.status !== 'RUNNING') return null
  if (lastRun(record)?.n !== runN) return null
  return record.stop_request ?? null
}
