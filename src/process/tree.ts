import { readdirSync, readFileSync } from 'node:fs'
import {
  checkIdentity,
  hostFacts,
  isDeadState,
  type ProcStat,
  PS_ENV,
  parseProcStat,
  readProcStat,
} from './identity.js'

/** What a tree walk needs to know about its root: a pid and the start time recorded with it. */
export interface RootIdentity {
  pid: number
  start_time: string | null
  hostname?: string | null
  boot_id?: string | null
  pid_namespace?: string | null
}

/**
 * 'alive': the root is the recorded process. 'exited': it is, but only as a zombie (not yet reaped): its pid,
 * and so its process group id, cannot have been reused. 'dead': gone or the pid now belongs to another process.
 * 'unverifiable': no start time, or recorded on another host or pid namespace.
 */
export type RootState = 'alive' | 'exited' | 'dead' | 'unverifiable'

export function rootState(root: RootIdentity): RootState {
  const check = checkIdentity(root)
  if (check !== 'dead') return check
  const here = hostFacts()
  if (root.boot_id && here.boot_id && root.boot_id !== here.boot_id) return 'dead'
  // checkIdentity said dead: a matching start time now can only be a zombie.
  const stat = readProcStat(root.pid)
  return stat && stat.startTime === root.start_time ? 'exited' : 'dead'
}

/** The process table. Linux reads /proc; elsewhere one `ps` call. */
export function listProcesses(): ProcStat[] {
  return process.platform === 'linux' ? listProcFs() : listPs()
}

function listProcFs(): ProcStat[] {
  const table: ProcStat[] = []
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return table
  }
  for (const name of names) {
    const first = name.charCodeAt(0)
    if (first < 48 || first > 57) continue
    const pid = Number(name)
    if (!Number.isSafeInteger(pid)) continue
    let text: string
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      // Exited between readdir and read.
      continue
    }
    const stat = parseProcStat(pid, text)
    if (stat) table.push(stat)
  }
  return table
}

const PS_LINE = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/

function listPs(): ProcStat[] {
  let out: string
  try {
    // Loaded only here: most commands never need a child process.
    const { execFileSync } = process.getBuiltinModule('node:child_process')
    out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: PS_ENV,
      maxBuffer: 64 * 1024 * 1024,
    })
  } catch {
    return []
  }
  const table: ProcStat[] = []
  for (const line of out.split('\n')) {
    const m = PS_LINE.exec(line)
    if (!m) continue
    table.push({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      pgrp: Number(m[3]),
      state: (m[4] as string).charAt(0),
      // ps -A does not give the session here; tree walks do not need it.
      session: 0,
      startTime: (m[5] as string).replace(/\s+/g, ' '),
    })
  }
  return table
}

export function identityKey(pid: number, startTime: string): string {
  return `${pid}@${startTime}`
}

/**
 * Live (non-zombie) processes of `table` that belong to the tree: the root itself, members of the root's process
 * group (only while the root holds its pid: then no other group can carry that id) and every descendant, by
 * ppid, of the root or of an `anchor` (an earlier member). Anchors count only while their start time still
 * matches, so a reused pid never adopts a stranger's children.
 *
 * Children that left with setsid AND were reparented (their parent exited) before a scan cannot be found.
 */
export function collectTree(
  table: readonly ProcStat[],
  root: { pid: number; start_time: string },
  options: { includeGroup?: boolean; anchors?: Iterable<{ pid: number; start_time: string }> } = {},
): ProcStat[] {
  const byPid = new Map<number, ProcStat>()
  const children = new Map<number, ProcStat[]>()
  for (const stat of table) {
    byPid.set(stat.pid, stat)
    const siblings = children.get(stat.ppid)
    if (siblings) siblings.push(stat)
    else children.set(stat.ppid, [stat])
  }
  const found = new Map<number, ProcStat>()
  const queue: ProcStat[] = []
  const visit = (stat: ProcStat) => {
    if (found.has(stat.pid)) return
    found.set(stat.pid, stat)
    queue.push(stat)
  }
  const rootStat = byPid.get(root.pid)
  const rootHeld = rootStat !== undefined && rootStat.startTime === root.start_time
  if (rootStat && rootHeld) visit(rootStat)
  if (rootHeld && options.includeGroup !== false) {
    for (const stat of table) if (stat.pgrp === root.pid) visit(stat)
  }
  for (const anchor of options.anchors ?? []) {
    const stat = byPid.get(anchor.pid)
    if (stat && stat.startTime === anchor.start_time) visit(stat)
  }
  for (let i = 0; i < queue.length; i++) {
    const parent = queue[i] as ProcStat
    for (const child of children.get(parent.pid) ?? []) visit(child)
  }
  return [...found.values()].filter((stat) => !isDeadState(stat.state))
}
