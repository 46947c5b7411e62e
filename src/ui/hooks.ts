import { useStdout } from 'ink'
import { useEffect, useRef, useState } from 'react'
import { pagerRows } from './frame.js'
import type { Screen } from './on-key.js'
import type { DashboardDetail, DashboardPort, DashboardSession, Listing } from './port.js'
import type { Size } from './view.js'

// The dashboard's hooks: the screen's size, the listing and its watch, the detail pane, the clock, a followed log.

export function useSize(): Size {
  const { stdout } = useStdout()
  const read = () => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 })
  const [size, setSize] = useState(read)
  useEffect(() => {
    const resized = () => setSize(read())
    stdout.on('resize', resized)
    return () => {
      stdout.off('resize', resized)
    }
  })
  return size
}

/** The sessions, read again whenever a record changes (and every few seconds while some run: liveness). */
export function useListing(port: DashboardPort): { listing: Listing | null; reload: () => void } {
  const [listing, setListing] = useState<Listing | null>(null)
  const state = useRef({ loading: false, again: false, gone: false })
  const reload = () => {
    const s = state.current
    if (s.loading) {
      s.again = true
      return
    }
    s.loading = true
    port
      .sessions()
      .then((next) => {
        if (!s.gone) setListing(next)
      })
      .catch((error: unknown) => {
        if (!s.gone) setListing({ sessions: [], warnings: [String(error)] })
      })
      .finally(() => {
        s.loading = false
        if (s.again && !s.gone) {
          s.again = false
          reload()
        }
      })
  }
  // biome-ignore lint/correctness/useExhaustiveDependencies: the listing is read once at mount, then on every change the watch reports
  useEffect(() => {
    reload()
    const stop = port.watch(reload)
    return () => {
      state.current.gone = true
      stop()
    }
  }, [])
  const running = listing?.sessions.some((s) => s.statusCode === 'RUNNING') ?? false
  // biome-ignore lint/correctness/useExhaustiveDependencies: the timer depends only on whether some session runs
  useEffect(() => {
    if (!running) return
    // A supervisor that died without a word writes nothing to watch: `list` reconciles it, so does this.
    const timer = setInterval(reload, 5000)
    return () => clearInterval(timer)
  }, [running])
  return { listing, reload }
}

/** The detail pane's content for the selected session, fetched shortly after the selection settles. */
export function useDetail(
  port: DashboardPort,
  session: DashboardSession | undefined,
  width: number,
  version: Listing | null,
  enabled: boolean,
): DashboardDetail | undefined {
  const [detail, setDetail] = useState<DashboardDetail>()
  // biome-ignore lint/correctness/useExhaustiveDependencies: fetched again when the selection, its status or state, the listing or the width change, not on every render
  useEffect(() => {
    if (!session || !enabled) return
    let live = true
    const timer = setTimeout(() => {
      port.detail(session).then(
        (d) => live && setDetail(d),
        () => {},
      )
    }, 120)
    return () => {
      live = false
      clearTimeout(timer)
    }
  }, [session?.id, session?.statusCode, session?.state, width, version, enabled])
  return detail
}

/** A re-render every second: ages ("12s ago") move on. */
export function useTick(ms: number): Date {
  const [now, setNow] = useState(() => new Date())
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), ms)
    return () => clearInterval(timer)
  }, [ms])
  return now
}

/** While a followed log is open, its new lines are read every half second until the session ends. */
export function useFollow(port: DashboardPort, current: () => Screen, setScreen: (s: Screen) => void): void {
  const screen = current()
  const follow = screen.kind === 'pager' ? screen.follow : null
  const { stdout } = useStdout()
  // biome-ignore lint/correctness/useExhaustiveDependencies: the follow restarts only for another session; it reads the screen through the ref
  useEffect(() => {
    if (!follow) return
    let live = true
    const timer = setInterval(() => {
      port.log(follow, 2000).then(
        (log) => {
          const now = current()
          if (!live || now.kind !== 'pager' || now.follow?.id !== follow.id || !log.ok) return
          const rows = pagerRows({ columns: stdout.columns || 80, rows: stdout.rows || 24 })
          const atEnd = now.offset >= Math.max(0, now.lines.length - rows)
          setScreen({
            ...now,
            lines: log.lines,
            offset: atEnd ? Math.max(0, log.lines.length - rows) : now.offset,
            follow: log.running ? follow : null,
            title: log.running ? now.title : `log of ${follow.id} (ended)`,
          })
        },
        () => {},
      )
    }, 500)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [follow?.id])
}
