import { join } from 'node:path'
import { closeFd, openRead, readBytesAt } from '../../../disk/door.js'
import type { OutputSink } from '../../../process/pipes.js'
import type { AgentExit } from '../../../process/supervisor.js'
import { lastRun } from '../../record/liveness.js'
import type { SessionRecord } from '../../record/schema.js'
import type { SessionBackend, StartedRun, StartIo } from '../backend.js'
import { settleEnded } from '../settle.js'
import { reportOf, runDirOf } from './collect.js'
import { RUN_FILES } from './job-script.js'
import { jobActive, type SlurmJobIdentity, type SlurmJobView, viewJob } from './jobs.js'
import { jobExit } from './outcome.js'
import { stopJob } from './stop.js'
import type { SlurmExec } from './tools.js'

/** How often a foreground run looks at the job's output, and how often it asks Slurm about the job. */
const OUTPUT_POLL_MS = 200
const JOB_POLL_MS = 1000
/** Between the TERM a stop signal sends the agent (through the job script) and the `scancel` of the job. */
const STOP_GRACE_MS = 1500

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A foreground `run --backend slurm` (SPEC §14): no harness process stays alive per Slurm session, so the
 * command that submitted the job waits for it itself, polling the cluster and showing the job's output as it
 * grows in the spool; once the job has ended it settles the session (the work collected, the outcome recorded)
 * and exits as a local run would. Ctrl-C, a hang-up or SIGTERM stops the job as `pause` does (its work comes back)
 * and the run is PAUSED by what harness received. A client killed with SIGKILL loses nothing: the job runs on,
 * and `wait`, `show`, `logs -f` and the acting commands take it from there.
 */
export async function followInForeground(
  backend: SessionBackend,
  record: SessionRecord,
  io: StartIo,
  exec: SlurmExec,
): Promise<StartedRun> {
  const facts = record.slurm
  if (!facts) return { record }
  const identity: SlurmJobIdentity = {
    cluster: facts.cluster,
    job_id: facts.job_id,
    submit_time: facts.submit_time,
  }
  const log = join(runDirOf(record.id, facts), RUN_FILES.log)
  let received: NodeJS.Signals | null = null
  let stopping: Promise<unknown> | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (received) return
    received = signal
    stopping = stopJob(exec, identity, { graceMs: STOP_GRACE_MS }).catch(() => undefined)
  }
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
  for (const signal of signals) process.on(signal, onSignal)
  try {
    const view = await untilEnded(exec, identity, log, io.output)
    await stopping
    const env = await io.act()
    const exit = jobExit(view, reportOf(runDirOf(record.id, facts))) ?? { exitCode: null, signal: null }
    const current = env.store.get(record.id) ?? record
    const settled = await settleEnded(
      backend,
      current,
      received ? { ...exit, interruptedBy: received } : exit,
      env,
    )
    return { record: settled, exit: agentExitOf(settled, received) }
  } finally {
    for (const signal of signals) process.off(signal, onSignal)
  }
}

/** Copies the job's output to `output` as it grows, until Slurm says the job has ended; its last word. */
async function untilEnded(
  exec: SlurmExec,
  identity: SlurmJobIdentity,
  log: string,
  output: OutputSink,
): Promise<SlurmJobView> {
  let offset = 0
  let asked = 0
  for (;;) {
    offset = copyFrom(log, offset, output)
    if (Date.now() - asked >= JOB_POLL_MS) {
      asked = Date.now()
      const view = await viewJob(exec, identity)
      if (!jobActive(view)) {
        copyFrom(log, offset, output)
        return view
      }
    }
    await sleep(OUTPUT_POLL_MS)
  }
}

/** What the job's output file holds past `offset`, to `output` (through the door: the job wrote it). */
function copyFrom(path: string, offset: number, output: OutputSink): number {
  let source: { fd: number; size: number }
  try {
    source = openRead(path)
  } catch {
    return offset
  }
  try {
    let position = offset
    while (position < source.size) {
      const chunk = readBytesAt(source.fd, Math.min(64 * 1024, source.size - position), position)
      if (chunk.length === 0) break
      output.write(chunk)
      position += chunk.length
    }
    return position
  } finally {
    closeFd(source.fd)
  }
}

/** The run's end as a foreground run exits with it (launch.ts `foregroundExit`). */
function agentExitOf(record: SessionRecord, received: NodeJS.Signals | null): AgentExit {
  const run = lastRun(record)
  return {
    exitCode: run?.exit_code ?? null,
    signal: (run?.signal ?? null) as NodeJS.Signals | null,
    stopSignal: received,
    stopped: received !== null,
    ...(run?.error && record.stop_reason === 'start-failed' ? { spawnError: run.error } : {}),
  }
}
