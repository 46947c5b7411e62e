import { type FSWatcher, lstatPath, type Stats, watchDir } from '../../disk/door.js'
import { type LongTimer, longTimeout } from '../../long-timer.js'
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

/** How long a deadline whose request could not be committed (a full disk) waits before it tries again. */
const DEADLINE_RETRY_MS = 1000

/**
 * `run --timeout` / `resume --timeout` (SPEC §5): `ms` from now, commits a pause request with `reason:
 * "timeout"` to run `runN` and hands it to the supervisor, which stops the agent as `session pause` would; the
 * run ends PAUSED `timeout` (exit 124). A stop already requested by someone else is left as it is (its own
 * watch carries it out). Any length works (long-timer.ts).
 */
export function watchDeadline(
  store: SessionStore,
  id: string,
  runN: number,
  options: { ms: number; graceMs: number; pid: number },
  onRequest: (request: StopRequest) => void,
): StopWatch {
  let closed = false
  let timer: LongTimer | undefined
  const fire = async () => {
    if (closed) return
    const request: StopRequest = {
      action: 'pause',
      at: new Date().toISOString(),
      by_pid: options.pid,
      grace_ms: options.graceMs,
      reason: 'timeout',
    }
    try {
      const record = await store.update(id, (current) =>
        current.status === 'RUNNING' && lastRun(current)?.n === runN && !current.stop_request
          ? { ...current, stop_request: request }
          : undefined,
      )
      const committed = record.stop_request
      if (!closed && committed?.reason === 'timeout' && committed.at === request.at) onRequest(committed)
    } catch {
      if (!closed) timer = longTimeout(() => void fire(), DEADLINE_RETRY_MS)
    }
  }
  timer = longTimeout(() => void fire(), options.ms)
  return {
    close() {
      closed = true
      timer?.clear()
    },
  }
}
