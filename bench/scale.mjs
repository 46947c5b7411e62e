// Sessions at scale (SPEC §9, "Aims at scale"; docs/performance.md): the memory of N sessions alive at once,
// detached and in tmux, summed as PSS over every process that exists because of harness (supervisors and, for
// tmux, the tmux server; not the agents), then a kill of all of them; and N detached sessions started at once,
// each of which must end with its own exit code and status. bench/run.mjs runs both as sections ("memory",
// "concurrent"); alone:
//
//   node bench/scale.mjs [--sessions 100] [--concurrent 200] [--only memory,concurrent] [--runtime native]
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Runs `harness args` and resolves with its exit code and stdout (stderr kept for a failure's message). */
export function harnessRun(harness, args, { cwd, env }) {
  return new Promise((resolve) => {
    const child = spawn(harness, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = []
    const err = []
    child.stdout.on('data', (chunk) => out.push(chunk))
    child.stderr.on('data', (chunk) => err.push(chunk))
    child.on('error', (error) => resolve({ code: -1, stdout: '', stderr: String(error) }))
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    )
  })
}

/** Runs `jobs` (functions returning promises) with at most `width` at a time; their results in order. */
async function pooled(jobs, width) {
  const results = new Array(jobs.length)
  let next = 0
  const worker = async () => {
    while (next < jobs.length) {
      const at = next++
      results[at] = await jobs[at]()
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker))
  return results
}

/** Every record of a project, read as the files they are (the bench reads, harness alone writes). */
function records(dir) {
  const sessions = join(dir, '.harness', 'sessions')
  return readdirSync(sessions)
    .filter((name) => name.endsWith('.json'))
    .map((name) => JSON.parse(readFileSync(join(sessions, name), 'utf8')))
}

/** PSS of a process in KB (/proc/<pid>/smaps_rollup), 0 when it is gone. */
function pssKb(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    return Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0)
  } catch {
    return 0
  }
}

/** CPU time a process has used (user and system, its own, not its children's), in clock ticks (1/100 s). */
function cpuTicks(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

/** How tmux is told which server: a path, or a name under TMUX_TMPDIR (process/tmux.ts). */
const socketArgs = (socket) => (socket.includes('/') ? ['-S', socket] : ['-L', socket])

/** The pid of the tmux server on `socket`, or null. */
function tmuxServerPid(socket, env) {
  try {
    const args = [...socketArgs(socket), 'display-message', '-p', '#{pid}']
    return Number(execFileSync('tmux', args, { env, stdio: ['ignore', 'pipe', 'ignore'] }).toString())
  } catch {
    return null
  }
}

/** Waits (polling, a ceiling of `ms`) until `done()` is true; false if it never was. */
async function until(done, ms = 300_000) {
  const deadline = Date.now() + ms
  while (!done()) {
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return true
}

/**
 * `count` sessions alive at once (`mode` 'detach' or 'tmux', agents sleeping), their harness processes' PSS
 * summed, then each killed: the PSS per session and what the kill left. Throws when a session did not start,
 * was not KILLED, or left a process behind.
 */
export async function benchMemory({ harness, env, dir, count = 100, mode = 'detach', log = () => {} }) {
  mkdirSync(dir, { recursive: true })
  const flag = mode === 'tmux' ? '--tmux' : '--detach'
  const started = await pooled(
    Array.from(
      { length: count },
      () => () =>
        harnessRun(harness, ['run', '-q', '--no-worktree', flag, '-a', 'exec', '--', 'sleep', '900'], {
          cwd: dir,
          env,
        }),
    ),
    4,
  )
  const failed = started.filter((result) => result.code !== 0)
  if (failed.length) throw new Error(`${failed.length} of ${count} did not start: ${failed[0].stderr.trim()}`)
  const ids = started.map((result) => result.stdout.trim())
  let all = records(dir)
  const running = all.filter((record) => record.status === 'RUNNING' && record.runs.at(-1).pid)
  if (running.length !== count) throw new Error(`${running.length} of ${count} sessions are RUNNING`)
  // Every process that exists because of harness: the supervisors, and the tmux servers the sessions use.
  const supervisors = running.map((record) => record.runs.at(-1).supervisor_pid)
  const agents = running.map((record) => record.runs.at(-1).pid)
  const sockets = [...new Set(running.map((record) => record.tmux_socket).filter(Boolean))]
  const servers = sockets.map((socket) => tmuxServerPid(socket, env)).filter(Boolean)
  const load = loadavg()[0]
  const totalKb = [...supervisors, ...servers].reduce((sum, pid) => sum + pssKb(pid), 0)
  const perSessionMb = totalKb / 1024 / count
  const agentsMb = agents.reduce((sum, pid) => sum + pssKb(pid), 0) / 1024 / count
  // What they cost while their agents sleep: CPU over 10 s, in ms per second per session.
  const harnessPids = [...supervisors, ...servers]
  const before = harnessPids.reduce((sum, pid) => sum + cpuTicks(pid), 0)
  await new Promise((resolve) => setTimeout(resolve, 10_000))
  const idleCpuMs = ((harnessPids.reduce((sum, pid) => sum + cpuTicks(pid), 0) - before) * 10) / 10 / count
  log(
    `${count} sessions ${flag}: ${perSessionMb.toFixed(2)} MB PSS per session (${supervisors.length} supervisors, ` +
      `${servers.length} tmux servers; the agents ${agentsMb.toFixed(2)} MB each, not counted); idle CPU ` +
      `${idleCpuMs.toFixed(1)} ms a second per session; load ${load.toFixed(2)}`,
  )
  const kills = await pooled(
    ids.map((id) => () => harnessRun(harness, ['session', 'kill', id], { cwd: dir, env })),
    4,
  )
  const refused = kills.filter((result) => result.code !== 0)
  if (refused.length) throw new Error(`${refused.length} kills failed: ${refused[0].stderr.trim()}`)
  all = records(dir)
  const notKilled = all.filter((record) => record.status !== 'KILLED')
  if (notKilled.length) throw new Error(`${notKilled.length} sessions are not KILLED after kill`)
  // The supervisors record the outcome, then exit; tmux ends its sessions (and its server with the last).
  const pids = [...supervisors, ...agents]
  const gone = await until(() => pids.every((pid) => !alive(pid)), 120_000)
  if (!gone) throw new Error(`${pids.filter(alive).length} processes are left after the kill of all`)
  return { count, mode, perSessionMb, agentsMb, idleCpuMs, load }
}

/**
 * `count` detached sessions started at once, each agent sleeping 1-5 s and exiting with its own code: each
 * must end with that code and the matching status (0 COMPLETED, otherwise FAILED). Returns what was lost.
 */
export async function benchConcurrent({ harness, env, dir, count = 200, log = () => {} }) {
  mkdirSync(dir, { recursive: true })
  const plans = Array.from({ length: count }, (_, i) => ({
    sleep: 1 + (i % 5),
    code: i % 7 === 0 ? 0 : i % 7,
  }))
  const t0 = performance.now()
  const started = await Promise.all(
    plans.map((plan) =>
      harnessRun(
        harness,
        [
          'run',
          '-q',
          '--no-worktree',
          '--detach',
          '-a',
          'exec',
          '--',
          'sh',
          '-c',
          `sleep ${plan.sleep}; exit ${plan.code}`,
        ],
        { cwd: dir, env },
      ),
    ),
  )
  const startMs = performance.now() - t0
  const failed = started.filter((result) => result.code !== 0)
  const ids = started.map((result) => result.stdout.trim())
  const ended = await until(() => records(dir).every((record) => record.status !== 'RUNNING'), 600_000)
  const byId = new Map(records(dir).map((record) => [record.id, record]))
  let wrong = 0
  ids.forEach((id, i) => {
    const record = byId.get(id)
    const plan = plans[i]
    const status = plan.code === 0 ? 'COMPLETED' : 'FAILED'
    if (!record || record.exit_code !== plan.code || record.status !== status) wrong++
  })
  const lost = failed.length + wrong
  log(
    `${count} detached sessions at once: ${failed.length} failed to start, ${wrong} wrong outcomes` +
      `${ended ? '' : ' (some still RUNNING after 10 minutes)'}; all started in ${(startMs / 1000).toFixed(1)} s, ` +
      `load ${loadavg()[0].toFixed(2)}`,
  )
  if (failed.length) log(`first failure: ${failed[0].stderr.trim()}`)
  return { count, lost, startMs }
}

/** Ends whatever the sessions of `dir` still run (a bench that failed half-way): by the pids they recorded. */
export function sweep(dir, env) {
  try {
    for (const record of records(dir)) {
      for (const run of record.runs ?? []) {
        for (const pid of [run.pid, run.supervisor_pid]) if (pid && alive(pid)) process.kill(pid, 'SIGKILL')
      }
      if (record.tmux_socket)
        spawn('tmux', [...socketArgs(record.tmux_socket), 'kill-server'], { env, stdio: 'ignore' })
    }
  } catch {}
}

/** The bench's environment for these runs: a private state folder, no user settings, no auto cleanup. */
export function scaleEnv(base, work) {
  // A tmux server of its own (TMUX_TMPDIR): its memory is these sessions' alone.
  mkdirSync(join(work, 'tmux'), { recursive: true })
  const env = {
    ...base,
    NO_COLOR: '1',
    XDG_STATE_HOME: join(work, 'state'),
    TMUX_TMPDIR: join(work, 'tmux'),
    HARNESS_AUTO_CLEANUP: 'off',
  }
  delete env.TMUX
  delete env.TMUX_PANE
  for (const key of Object.keys(env))
    if (key.startsWith('HARNESS_') && key !== 'HARNESS_AUTO_CLEANUP') delete env[key]
  return env
}

// Alone: node bench/scale.mjs
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const arg = (name) => {
    const at = process.argv.indexOf(`--${name}`)
    return at >= 0 ? process.argv[at + 1] : undefined
  }
  const harness = fileURLToPath(new URL('../bin/harness', import.meta.url))
  const only = (arg('only') ?? 'memory,concurrent').split(',')
  const work = realpathSync(await mkdtemp(join(tmpdir(), 'harness-scale-')))
  const env = { ...scaleEnv(process.env, work), HARNESS_RUNTIME: arg('runtime') ?? 'native' }
  const log = (line) => console.log(line)
  let failed = false
  try {
    const sessions = Number(arg('sessions') ?? 100)
    for (const mode of ['detach', 'tmux']) {
      if (!only.includes('memory')) break
      if (mode === 'tmux' && !existsSync('/usr/bin/tmux')) continue
      await benchMemory({ harness, env, dir: join(work, mode), count: sessions, mode, log })
    }
    if (only.includes('concurrent')) {
      const count = Number(arg('concurrent') ?? 200)
      const { lost } = await benchConcurrent({ harness, env, dir: join(work, 'concurrent'), count, log })
      failed = lost > 0
    }
  } finally {
    for (const name of ['detach', 'tmux', 'concurrent']) sweep(join(work, name), env)
    rmSync(work, { recursive: true, force: true })
  }
  process.exitCode = failed ? 1 : 0
}
