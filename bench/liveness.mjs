// Liveness at scale: a project of RUNNING records whose supervisors and agents are live processes, and the same
// records finished, for `harness session list` to be compared on both.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { writeProject } from './records.mjs'

/** `count` live `sleep` processes (the records share them: a check costs the same whichever pid it reads). */
export async function liveFixtureProcesses(count) {
  const children = Array.from({ length: count }, () => spawn('sleep', ['600'], { stdio: 'ignore' }))
  await Promise.all(children.map((child) => new Promise((resolve) => child.once('spawn', resolve))))
  return children
}

/** Linux start time of a process: field 22 of /proc/<pid>/stat, counted after the last ')'. */
function startTime(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]
}

/**
 * Writes `<dir>/running` (every record RUNNING, its latest run's supervisor and agent one of `live`, on this
 * host) and `<dir>/finished` (the same records, COMPLETED), sealed with `seal`. Returns both project folders.
 */
export function writeLivenessProjects(dir, count, live, seal) {
  const running = join(dir, 'running')
  const finished = join(dir, 'finished')
  writeProject(finished, count, 7)
  writeProject(running, count, 7)
  const place = {
    hostname: hostname(),
    boot_id: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
    pid_namespace: readlinkSync('/proc/self/ns/pid'),
  }
  const processes = live.map((child) => ({ pid: child.pid, start: startTime(child.pid) }))
  for (const [project, status] of [
    [running, 'RUNNING'],
    [finished, 'COMPLETED'],
  ]) {
    const sessions = join(project, '.harness', 'sessions')
    readdirSync(sessions).forEach((name, i) => {
      const path = join(sessions, name)
      const record = JSON.parse(readFileSync(path, 'utf8'))
      const supervisor = processes[i % processes.length]
      const agent = processes[(i + 1) % processes.length]
      const last = record.runs[record.runs.length - 1]
      Object.assign(last, {
        ...place,
        supervisor_pid: supervisor.pid,
        supervisor_start_time: supervisor.start,
        pid: agent.pid,
        pid_start_time: agent.start,
        ended_at: status === 'RUNNING' ? null : last.ended_at,
        exit_code: status === 'RUNNING' ? null : 0,
        signal: null,
      })
      Object.assign(record, {
        status,
        stop_reason: null,
        stop_request: null,
        exit_code: status === 'RUNNING' ? null : 0,
        completed_at: status === 'RUNNING' ? null : last.ended_at,
        metadata: { ...record.metadata, ...place },
      })
      writeFileSync(path, `${JSON.stringify(seal(record, project), null, 2)}\n`, { mode: 0o600 })
    })
  }
  return { running, finished }
}
