import { readFileSync, readlinkSync } from 'node:fs'
import { hostname } from 'node:os'

/**
 * Who a process is, beyond its pid: a pid alone is never trusted (docs/development/design.md, "Process
 * identity"). Start time is the kernel's (Linux: clock ticks after boot, field 22 of /proc/<pid>/stat).
 */
export interface ProcessIdentity {
  pid: number
  start_time: string | null
  hostname: string
  boot_id: string | null
  pid_namespace: string | null
}

export interface ProcStat {
  pid: number
  state: string
  ppid: number
  pgrp: number
  session: number
  startTime: string
}

const isLinux = process.platform === 'linux'

/** Parses /proc/<pid>/stat; fields are read after the last ')' because the command name may hold spaces and ')'. */
export function parseProcStat(pid: number, text: string): ProcStat | null {
  const close = text.lastIndexOf(')')
  if (close < 0) return null
  const fields = text.slice(close + 2).split(' ')
  // fields[0] is field 3 (state); field N is fields[N - 3].
  const state = fields[0]
  const startTime = fields[19]
  if (state === undefined || startTime === undefined) return null
  return {
    pid,
    state,
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    startTime,
  }
}

export function readProcStat(pid: number): ProcStat | null {
  if (!isLinux) return readPsStat(pid)
  try {
    return parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return null
  }
}

/**
 * The environment ps runs with: a fixed PATH (ps is in /bin or /usr/bin everywhere), and lstart in the C
 * locale and UTC, or a start time recorded by one process would not match the same process read by another.
 */
export const PS_ENV: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC' }

/** macOS and other systems without /proc: ps gives state, parent, group and start time. */
function readPsStat(pid: number): ProcStat | null {
  try {
    // Loaded only here: most commands never need a child process.
    const { execFileSync } = process.getBuiltinModule('node:child_process')
    const out = execFileSync('ps', ['-o', 'stat=,ppid=,pgid=,sess=,lstart=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: PS_ENV,
      // A deadline like every command harness runs for itself (docs/security.md, "Deadlines").
      timeout: 10_000,
      killSignal: 'SIGKILL',
    }).trim()
    const m = /^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(.+)$/.exec(out)
    if (!m) return null
    return {
      pid,
      state: (m[1] as string).charAt(0),
      ppid: Number(m[2]),
      pgrp: Number(m[3]),
      session: Number(m[4]),
      startTime: (m[5] as string).replace(/\s+/g, ' '),
    }
  } catch {
    return null
  }
}

let cachedHost: { hostname: string; boot_id: string | null; pid_namespace: string | null } | undefined

/** Facts about this machine that make a recorded pid meaningful here. */
export function hostFacts(): { hostname: string; boot_id: string | null; pid_namespace: string | null } {
  if (cachedHost) return cachedHost
  let bootId: string | null = null
  let pidNamespace: string | null = null
  if (isLinux) {
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    } catch {}
    try {
      pidNamespace = readlinkSync('/proc/self/ns/pid')
    } catch {}
  }
  cachedHost = { hostname: hostname(), boot_id: bootId, pid_namespace: pidNamespace }
  return cachedHost
}

/** Identity of a live process, or null when it does not exist (or is a zombie). */
export function identify(pid: number): ProcessIdentity | null {
  const stat = readProcStat(pid)
  if (!stat || isDeadState(stat.state)) return null
  return { pid, start_time: stat.startTime, ...hostFacts() }
}

let cachedSelf: ProcessIdentity | undefined

/**
 * This process's own identity, read once: its pid and start time cannot change while it runs. A lock is
 * taken for every record a batch touches (a cleanup of 1,000 sessions read /proc/self/stat 1,000 times).
 * A failed read is not kept: the next call tries again.
 */
export function selfIdentity(): ProcessIdentity | null {
  if (cachedSelf?.pid === process.pid) return cachedSelf
  const self = identify(process.pid)
  if (self) cachedSelf = self
  return self
}

export function isDeadState(state: string): boolean {
  return state === 'Z' || state === 'X' || state === 'x'
}

export type IdentityCheck = 'alive' | 'dead' | 'unverifiable'

/**
 * The identity of a child this process spawned and has not yet reaped, read at once after the spawn: a zombie
 * counts (a pid that is not reaped cannot be reused, so its start time is still the child's). Null only when
 * the child is already gone from the process table; then it has exited (docs/security.md, "Liveness of a pid
 * without a start time").
 */
export function identifyChild(pid: number): ProcessIdentity | null {
  const stat = readProcStat(pid)
  return stat ? { pid, start_time: stat.startTime, ...hostFacts() } : null
}

/**
 * Is the process that `recorded` describes still the one running under that pid?
 * 'dead': gone, a zombie, or the pid now belongs to another process (or the machine rebooted). A pid recorded
 * here (this hostname, boot id and pid namespace) whose process does not exist is dead, start time or not.
 * 'unverifiable': recorded on another host or pid namespace (or without the facts that say where), or a live
 * process under a pid recorded without its start time, which cannot be told from a newcomer.
 */
export function checkIdentity(recorded: {
  pid?: number | null
  start_time?: string | null
  hostname?: string | null
  boot_id?: string | null
  pid_namespace?: string | null
}): IdentityCheck {
  const { pid, start_time } = recorded
  if (!pid || pid <= 0) return 'unverifiable'
  const here = hostFacts()
  // Without the facts that say where it ran, a pid may belong to another machine or container.
  if (!recorded.hostname) return 'unverifiable'
  if ((here.boot_id && !recorded.boot_id) || (here.pid_namespace && !recorded.pid_namespace)) {
    return 'unverifiable'
  }
  if (recorded.hostname && recorded.hostname !== here.hostname) return 'unverifiable'
  if (recorded.pid_namespace && here.pid_namespace && recorded.pid_namespace !== here.pid_namespace) {
    return 'unverifiable'
  }
  // Same host, another boot: every process of that boot is gone.
  if (recorded.boot_id && here.boot_id && recorded.boot_id !== here.boot_id) return 'dead'
  const stat = readProcStat(pid)
  if (!stat) return isLinux || !processExists(pid) ? 'dead' : 'unverifiable'
  if (isDeadState(stat.state)) return 'dead'
  if (!start_time) return 'unverifiable'
  return stat.startTime === start_time ? 'alive' : 'dead'
}

/** Whether any process holds `pid` (EPERM means it exists but is not ours). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
