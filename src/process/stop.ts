import {
  checkIdentity,
  hostFacts,
  isDeadState,
  type ProcessIdentity,
  type ProcStat,
  readProcStat,
} from './identity.js'
import {
  collectTree,
  identityKey,
  listProcesses,
  type RootIdentity,
  type RootState,
  rootState,
} from './tree.js'

export type { RootIdentity, RootState } from './tree.js'
export { listProcesses, snapshotTree } from './tree.js'

/*
 * Stopping a process tree (docs/design.md, "Stopping"). A pid is signalled only right after its start time was read again and
 * matched; a process group only while its leader is our verified root (alive or an unreaped zombie: either way
 * it holds the pid, so no other group can carry that id). Limits, inherent to a scan of the process table:
 * - children that escape with setsid AND are reparented (their parent exited) before a scan sees them cannot be
 *   found: they are in neither the group nor the tree any more;
 * - between the check and the signal the process could exit and its pid be reused; that window is a few
 *   microseconds on Linux (pid allocation would have to wrap around in it);
 * - on macOS start times have a resolution of one second.
 */

export interface StopOptions {
  /** How long processes get after SIGTERM before SIGKILL. */
  graceMs: number
  /** How often the table is re-scanned; at most 50 ms. */
  pollMs?: number
  /** How long to wait, after SIGKILL, for everything to be gone. */
  confirmMs?: number
  /** Aborting cuts the grace period short: SIGKILL at once. The stop itself always completes. */
  signal?: AbortSignal
  /** Called once, just before SIGKILL is sent (only when something outlived the grace period). */
  onEscalate?: () => void
}

export interface StopOutcome {
  /** The root's identity was verified (alive, or exited but not yet reaped). */
  rootFound: boolean
  /** 'refused': pid 1 or lower, or harness itself: never signalled. */
  rootState: RootState | 'refused'
  /** Processes that were sent at least one signal (group signals count for the members seen in the group). */
  signalled: number
  /** The root itself was signalled while it was still running (it had not exited by itself first). */
  rootSignalled: boolean
  /** Processes that were still alive after the grace period and were sent SIGKILL. */
  killed: number
  /** Processes of the tree still alive at the end (SIGKILL could not take them, e.g. not ours to signal). */
  survivors: ProcessIdentity[]
  elapsedMs: number
}

interface Member {
  pid: number
  start_time: string
  gone: boolean
  term: boolean
  kill: boolean
}

const DEFAULT_POLL_MS = 25
const MAX_POLL_MS = 50
const DEFAULT_CONFIRM_MS = 2000
const isLinux = process.platform === 'linux'

/** The recorded process is still the one running under its pid (not a zombie, not a reused pid). */
export function isAlive(identity: RootIdentity): boolean {
  return checkIdentity(identity) === 'alive'
}

/**
 * SIGTERM to the root, its process group and all its descendants (snapshotted before the first signal, then
 * re-scanned every poll for new ones); SIGKILL to whatever is left after `graceMs`; waits until all are gone.
 * A root whose identity does not match or cannot be verified is never signalled, nor is anything else.
 */
export async function stopProcessTree(root: RootIdentity, options: StopOptions): Promise<StopOutcome> {
  const started = performance.now()
  const pollMs = Math.min(Math.max(options.pollMs ?? DEFAULT_POLL_MS, 1), MAX_POLL_MS)
  const confirmMs = options.confirmMs ?? DEFAULT_CONFIRM_MS
  const elapsed = () => Math.round(performance.now() - started)
  const nothing = (state: StopOutcome['rootState']): StopOutcome => ({
    rootFound: false,
    rootState: state,
    signalled: 0,
    rootSignalled: false,
    killed: 0,
    survivors: [],
    elapsedMs: elapsed(),
  })

  if (!Number.isSafeInteger(root.pid) || root.pid <= 1 || root.pid === process.pid) return nothing('refused')
  const state = rootState(root)
  if ((state !== 'alive' && state !== 'exited') || !root.start_time) return nothing(state)
  const rootId = { pid: root.pid, start_time: root.start_time }
  // Signalling our own group would signal us (and whoever shares our terminal).
  const ownGroup = readProcStat(process.pid)?.pgrp
  const groupAllowed = root.pid !== ownGroup

  const members = new Map<string, Member>()
  const live = () => [...members.values()].filter((m) => !m.gone)
  const adopt = (table: readonly ProcStat[]) => {
    for (const stat of collectTree(table, rootId, { anchors: live() })) {
      if (stat.pid <= 1 || stat.pid === process.pid) continue
      const key = identityKey(stat.pid, stat.startTime)
      if (!members.has(key)) {
        members.set(key, { pid: stat.pid, start_time: stat.startTime, gone: false, term: false, kill: false })
      }
    }
  }
  /** Marks members that exited (or became zombies) as gone, then adds new group members and descendants. */
  const rescan = () => {
    const table = listProcesses()
    const byPid = new Map(table.map((stat) => [stat.pid, stat]))
    for (const m of members.values()) {
      const stat = byPid.get(m.pid)
      if (!stat || stat.startTime !== m.start_time || isDeadState(stat.state)) m.gone = true
    }
    adopt(table)
  }

  const wake = () => {
    for (const m of members.values()) {
      const stat = m.gone ? null : readProcStat(m.pid)
      if (stat?.startTime !== m.start_time || stat.state !== 'T') continue
      try {
        process.kill(m.pid, 'SIGCONT')
      } catch {}
    }
  }

  const send = (sig: 'SIGTERM' | 'SIGKILL', useGroup: boolean) => {
    const pending = (m: Member) => !m.gone && !(sig === 'SIGTERM' ? m.term : m.kill)
    if (!live().some(pending)) return
    // Linux: /proc/<pid>/stat read right before each signal; elsewhere one fresh table per wave.
    const table = isLinux ? undefined : new Map(listProcesses().map((stat) => [stat.pid, stat]))
    const fresh = (pid: number) => (table ? table.get(pid) : readProcStat(pid)) ?? null
    const mark = (m: Member) => {
      if (sig === 'SIGTERM') m.term = true
      else m.kill = true
    }
    const matches = (m: Member, stat: ProcStat | null): stat is ProcStat =>
      stat !== null && stat.startTime === m.start_time && !isDeadState(stat.state)
    // Group membership is read before the group signal: afterwards a killed member may already be a zombie.
    const inGroup = new Set<Member>()
    for (const m of members.values()) {
      if (!pending(m)) continue
      const stat = fresh(m.pid)
      if (!matches(m, stat)) m.gone = true
      else if (stat.pgrp === root.pid) inGroup.add(m)
    }
    if (useGroup && groupAllowed && inGroup.size > 0) {
      const leader = fresh(root.pid)
      if (leader && leader.startTime === root.start_time) {
        try {
          process.kill(-root.pid, sig)
          for (const m of inGroup) mark(m)
        } catch {
          // ESRCH: the group emptied meanwhile.
        }
      }
    }
    for (const m of members.values()) {
      if (!pending(m)) continue
      if (!matches(m, fresh(m.pid))) {
        m.gone = true
        continue
      }
      try {
        process.kill(m.pid, sig)
        mark(m)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ESRCH') m.gone = true
        // EPERM: not ours to signal; it will be reported as a survivor if it stays.
      }
    }
  }

  adopt(listProcesses())
  send('SIGTERM', true)
  // A stopped process (Ctrl-Z, SIGSTOP) gets SIGTERM only once it runs again: wake the tree.
  wake()
  const graceEnds = performance.now() + options.graceMs
  let confirmEnds = Number.POSITIVE_INFINITY
  let escalated = false
  while (live().length > 0) {
    await pause(pollMs, escalated ? undefined : options.signal)
    rescan()
    if (escalated) send('SIGKILL', true)
    else {
      send('SIGTERM', false)
      if (isLinux) wake() // newly found descendants may be stopped too (elsewhere each check costs a `ps`)
    }
    if (live().length === 0) break
    const now = performance.now()
    if (!escalated && (now >= graceEnds || options.signal?.aborted)) {
      escalated = true
      confirmEnds = now + confirmMs
      try {
        options.onEscalate?.()
      } catch {
        // A failing observer must not leave the tree half stopped.
      }
      send('SIGKILL', true)
    } else if (escalated && now >= confirmEnds) {
      break
    }
  }

  const facts = hostFacts()
  const all = [...members.values()]
  return {
    rootFound: true,
    rootState: state,
    signalled: all.filter((m) => m.term || m.kill).length,
    rootSignalled: all.some(
      (m) => m.pid === root.pid && m.start_time === root.start_time && (m.term || m.kill),
    ),
    killed: all.filter((m) => m.kill).length,
    survivors: live().map((m) => ({ pid: m.pid, start_time: m.start_time, ...facts })),
    elapsedMs: elapsed(),
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
