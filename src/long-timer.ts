/**
 * The longest delay a JavaScript timer holds: 2^31 - 1 ms, about 24.8 days. node and bun run a longer one at
 * once (node after a warning), so `checkpoint.interval: 30d` took a checkpoint every millisecond.
 */
export const TIMER_LIMIT_MS = 2 ** 31 - 1

export interface LongTimer {
  /** Stops it; idempotent. */
  clear(): void
}

/**
 * Calls `fn` once, `ms` from now, for any length (`run --timeout 30d`, `checkpoint.interval: 30d`): a chain of
 * timers of at most TIMER_LIMIT_MS each, measured against the clock, so the wait neither fires early nor drifts
 * by the lateness of each link. `unref`: the timer alone does not keep the process alive.
 */
export function longTimeout(fn: () => void, ms: number, options: { unref?: boolean } = {}): LongTimer {
  const due = Date.now() + Math.max(0, ms)
  let timer: NodeJS.Timeout | undefined
  let cleared = false
  const arm = () => {
    if (cleared) return
    const left = due - Date.now()
    if (left <= 0) {
      cleared = true
      fn()
      return
    }
    timer = setTimeout(arm, Math.min(left, TIMER_LIMIT_MS))
    if (options.unref) timer.unref()
  }
  arm()
  return {
    clear() {
      cleared = true
      clearTimeout(timer)
    },
  }
}
