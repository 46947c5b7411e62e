import { type FSWatcher, watchDir } from '../../disk/door.js'
import type { RecordStore } from '../ports.js'

/**
 * Wakes a waiter when session `id`'s files in the sessions folder change (fs.watch), or after `ms` at the latest:
 * a watch event can be missed (network file systems, a full inotify table), so the caller looks again anyway.
 */
export function watchRecord(
  store: RecordStore,
  id: string,
): { next(ms: number): Promise<void>; close(): void } {
  let wake: (() => void) | undefined
  let changed = false
  let watcher: FSWatcher | undefined
  try {
    watcher = watchDir(store.dir, (name) => {
      if (name !== null && !String(name).startsWith(id)) return
      changed = true
      wake?.()
    })
    watcher.on('error', () => {})
  } catch {
    // No watch here: the poll alone.
  }
  return {
    next: (ms) =>
      new Promise<void>((resolve) => {
        if (changed) {
          changed = false
          return resolve()
        }
        const timer = setTimeout(done, ms)
        function done() {
          clearTimeout(timer)
          wake = undefined
          changed = false
          resolve()
        }
        wake = done
      }),
    close: () => {
      try {
        watcher?.close()
      } catch {}
    },
  }
}
