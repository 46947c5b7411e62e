import { hostFacts, isDeadState, type ProcessIdentity, type ProcStat, readProcStat } from './identity.js'
import {
  collectTree,
  identityKey,
  listProcesses,
  type RootIdentity,
  type RootState,
  rootState,
} from './tree.js'

export type { RootIdentity, RootState } from './tree.js'
export { listProcesses } from './tree.js'

/*
 * Stopping a process tree (docs/development/design.md, "Stopping"). A pid is signalled only right after its
 * start time was read again and matched; a process group only while its leader is our verified root (alive or
 * an unreaped zombie: either way it holds the pid, so no other group can carry that id). Limits, inherent to
 * a scan of the process table:
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
  /**
   * Settles when the root has exited and been reaped (the caller is its parent): the wait then ends at once
   * instead of at the next poll, so an obedient agent is seen gone as soon as it is.
   */
  rootExit?: Promise<unknown>
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

/** A process of the tree being stopped, and what it was sent. */
export interface Member {
  pid: number
  start_time: string
  gone: boolean
  term: boolean
  kill: boolean
}

/** Monotonic milliseconds; process.hrtime, as the global `performance` loads perf_hooks on first use (a stop is timed). */
const clock = () => Number(process.hrtime.bigint()) / 1e6

const DEFAULT_POLL_MS = 25
const MAX_POLL_MS = 50
const DEFAULT_CONFIRM_MS = 2000
const isLinux = process.platform === 'linux'

/** The same process as `member` (pid and start time), still running (not a zombie). */
function stillRuns(member: Member, stat: ProcStat | null | undefined): stat is ProcStat {
  return !!stat && stat.startTime === member.start_time && !isDeadState(stat.state)
}

/**
 * Tree collection (pure): `members` with those `table` no longer shows running marked gone, plus the processes
 * of the tree that `table` shows for the first time (the root's group while the root holds its pid, and the
 * descendants of the root and of every member still running). Never pid 1 or lower, nor `self`.
 */
export function collectMembers(
  members: readonly Member[],
  table: readonly ProcStat[],
  root: { pid: number; start_time: string },
  self: number,
): Member[] {
  const byPid = new Map(table.map((stat) => [stat.pid, stat]))
  const next = members.map((m) => (m.gone || stillRuns(m, byPid.get(m.pid)) ? m : { ...m, gone: true }))
  const known = new Set(next.map((m) => identityKey(m.pid, m.start_time)))
  for (const stat of collectTree(table, root, { anchors: next.filter((m) => !m.gone) })) {
    const key = identityKey(stat.pid, stat.startTime)
    if (stat.pid <= 1 || stat.pid === self || known.has(key)) continue
    known.add(key)
    next.push({ pid: stat.pid, start_time: stat.startTime, gone: false, term: false, kill: false })
  }
  return next
}

/**
 * Whether a new scan of the whole process table can find anything: only the group of a root that still holds
 * its pid (running or a zombie) and the descendants of running members are ever adopted, so once every member
 * is gone and the root was reaped, there is nothing left to look for (and the table is not read again).
 */
export function scanCanFind(members: readonly Member[], rootHeld: boolean): boolean {
  return rootHeld || members.some((m) => !m.gone)
}

/** Who a wave of `sig` goes to, decided from each pending member's stat read just before (pure). */
export interface SignalPlan {
  /**
   * Signal the root's process group, then mark these (the pending members seen in it) as sent; if the group
   * signal fails (the group emptied meanwhile), they are signalled one by one with `each`.
   */
  group: Member[]
  /** Then each of these on its own, each checked once more right before its signal. */
  each: Member[]
  /** Found gone (exited, a zombie, or the pid now another process's). */
  gone: Member[]
}

export function planSignals(
  members: readonly Member[],
  sig: 'SIGTERM' | 'SIGKILL',
  stats: ReadonlyMap<number, ProcStat | null>,
  root: { pid: number },
  useGroup: boolean,
): SignalPlan {
  const plan: SignalPlan = { group: [], each: [], gone: [] }
  for (const m of members) {
    if (m.gone || (sig === 'SIGTERM' ? m.term : m.kill)) continue
    const stat = stats.get(m.pid)
    if (!stillRuns(m, stat)) plan.gone.push(m)
    else if (useGroup && stat.pgrp === root.pid) plan.group.push(m)
    else plan.each.push(m)
  }
  return plan
}

/** What the stop loop does after a poll (pure): the escalation plan. */
export type StopStep = 'done' | 'wait' | 'escalate' | 'give-up'

export function nextStep(state: {
  live: number
  escalated: boolean
  now: number
  graceEnds: number
  confirmEnds: number
  aborted: boolean
}): StopStep {
  if (state.live === 0) return 'done'
  if (!state.escalated) return state.now >= state.graceEnds || state.aborted ? 'escalate' : 'wait'
  return state.now >= state.confirmEnds ? 'give-up' : 'wait'
}

/** The outcome reported for `members` (pure). */
export function stopOutcome(
  members: readonly Member[],
  root: { pid: number; start_time: string },
  state: RootState,
  facts: Omit<ProcessIdentity, 'pid' | 'start_time'>,
  elapsedMs: number,
): StopOutcome {
  return {
    rootFound: true,
    rootState: state,
    signalled: members.filter((m) => m.term || m.kill).length,
    rootSignalled: members.some(
      (m) => m.pid === root.pid && m.start_time === root.start_time && (m.term || m.kill),
    ),
    killed: members.filter((m) => m.kill).length,
    survivors: members
      .filter((m) => !m.gone)
      .map((m) => ({ pid: m.pid, start_time: m.start_time, ...facts })),
    elapsedMs,
  }
}

/**
 * SIGTERM to the root, its process group and all its descendants (snapshotted before the first signal, then
 * re-scanned every poll for new ones); SIGKILL to whatever is left after `graceMs`; waits until all are gone.
 * A root whose identity does not match or cannot be verified is never signalled, nor is anything else.
 */
export async function stopProcessTree(root: RootIdentity, options: StopOptions): Promise<StopOutcome> {
  const started = clock()
  const pollMs = Math.min(Math.max(options.pollMs ?? DEFAULT_POLL_MS, 1), MAX_POLL_MS)
  const confirmMs = options.confirmMs ?? DEFAULT_CONFIRM_MS
  const elapsed = () => Math.round(clock() - started)
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
  const groupAllowed = root.pid !== readProcStat(process.pid)?.pgrp

  let members = collectMembers([], listProcesses(), rootId, process.pid)
  const live = () => members.filter((m) => !m.gone)
  const rescan = () => {
    if (isLinux) {
      // Each member's own stat first (cheap); the whole table only when it can still show something new.
      for (const m of live()) if (!stillRuns(m, readProcStat(m.pid))) m.gone = true
      const rootStat = readProcStat(root.pid)
      if (!scanCanFind(members, rootStat?.startTime === root.start_time)) return
    }
    members = collectMembers(members, listProcesses(), rootId, process.pid)
  }
  const send = (sig: 'SIGTERM' | 'SIGKILL', useGroup: boolean) => {
    signalWave(members, sig, rootId, useGroup && groupAllowed)
  }

  send('SIGTERM', true)
  // A stopped process (Ctrl-Z, SIGSTOP) gets SIGTERM only once it runs again: wake the tree.
  wakeStopped(members)
  const graceEnds = clock() + options.graceMs
  let confirmEnds = Number.POSITIVE_INFINITY
  let escalated = false
  // One early wake-up only: afterwards the root is gone and what is left (descendants) is polled.
  let rootExit = options.rootExit?.then(
    () => 'root-exit' as const,
    () => 'root-exit' as const,
  )
  while (live().length > 0) {
    const wait = pause(pollMs, escalated ? undefined : options.signal)
    const woke = await (rootExit ? Promise.race([wait, rootExit]) : wait)
    if (woke === 'root-exit') rootExit = undefined
    rescan()
    if (escalated) send('SIGKILL', true)
    else {
      send('SIGTERM', false)
      if (isLinux) wakeStopped(members) // newly found descendants may be stopped too (elsewhere each check costs a `ps`)
    }
    const step = nextStep({
      live: live().length,
      escalated,
      now: clock(),
      graceEnds,
      confirmEnds,
      aborted: options.signal?.aborted ?? false,
    })
    if (step === 'done' || step === 'give-up') break
    if (step === 'escalate') {
      escalated = true
      confirmEnds = clock() + confirmMs
      try {
        options.onEscalate?.()
      } catch {
        // A failing observer must not leave the tree half stopped.
      }
      send('SIGKILL', true)
    }
  }
  return stopOutcome(members, rootId, state, hostFacts(), elapsed())
}

/**
 * Sends one wave of `sig` as `planSignals` decides: a pid is signalled only right after its start time was read
 * again and matched; the group only while its leader is our verified root. Marks what was sent.
 */
function signalWave(
  members: Member[],
  sig: 'SIGTERM' | 'SIGKILL',
  root: { pid: number; start_time: string },
  useGroup: boolean,
): void {
  const pending = (m: Member) => !m.gone && !(sig === 'SIGTERM' ? m.term : m.kill)
  if (!members.some(pending)) return
  // Linux: /proc/<pid>/stat read right before each signal; elsewhere one fresh table per wave.
  const table = isLinux ? undefined : new Map(listProcesses().map((stat) => [stat.pid, stat]))
  const fresh = (pid: number) => (table ? table.get(pid) : readProcStat(pid)) ?? null
  const mark = (m: Member) => {
    if (sig === 'SIGTERM') m.term = true
    else m.kill = true
  }
  // Group membership is read before the group signal: afterwards a killed member may already be a zombie.
  const stats = new Map(members.filter(pending).map((m) => [m.pid, fresh(m.pid)]))
  const plan = planSignals(members, sig, stats, root, useGroup)
  for (const m of plan.gone) m.gone = true
  let rest = plan.each
  if (plan.group.length > 0) {
    const leader = fresh(root.pid)
    let sent = false
    if (leader && leader.startTime === root.start_time) {
      try {
        process.kill(-root.pid, sig)
        sent = true
      } catch {
        // ESRCH: the group emptied meanwhile.
      }
    }
    if (sent) for (const m of plan.group) mark(m)
    else rest = [...plan.group, ...rest]
  }
  for (const m of rest) {
    if (!stillRuns(m, fresh(m.pid))) {
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

/** SIGCONT to every running member that is stopped (state T). */
function wakeStopped(members: readonly Member[]): void {
  for (const m of members) {
    const stat = m.gone ? null : readProcStat(m.pid)
    if (stat?.startTime !== m.start_time || stat.state !== 'T') continue
    try {
      process.kill(m.pid, 'SIGCONT')
    } catch {}
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
