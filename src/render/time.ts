/** "3m ago", "2h ago", "5d ago"; "just now" under 5 seconds; future times read "in 3m". */
export function relativeTime(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return '-'
  const then = Date.parse(iso)
  if (Number.isNaN(then)) return '-'
  const seconds = Math.round((now.getTime() - then) / 1000)
  if (Math.abs(seconds) < 5) return 'just now'
  const text = shortDuration(Math.abs(seconds) * 1000)
  return seconds >= 0 ? `${text} ago` : `in ${text}`
}

/** The largest whole unit: 45s, 12m, 3h, 5d, 7w, 2y. */
function shortDuration(ms: number): string {
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h}h`
  const d = Math.floor(h / 24)
  if (d < 14) return `${d}d`
  if (d < 730) return `${Math.floor(d / 7)}w`
  return `${Math.floor(d / 365)}y`
}

/** Elapsed time between two instants, e.g. "32m 10s", "1h 02m", "850ms". */
export function elapsed(
  fromIso: string | null | undefined,
  toIso: string | null | undefined,
): string | undefined {
  if (!fromIso || !toIso) return undefined
  const ms = Date.parse(toIso) - Date.parse(fromIso)
  if (!Number.isFinite(ms) || ms < 0) return undefined
  if (ms < 1000) return `${ms}ms`
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`
  const h = Math.floor(m / 60)
  return `${h}h ${String(m % 60).padStart(2, '0')}m`
}
