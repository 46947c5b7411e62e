import { join, relative } from 'node:path'
import { entryExists, removeFolderTree } from '../../../disk/door.js'
import { IllegalStateError, UsageError } from '../../../errors.js'
import { bundleForJob } from '../../../git/bundle.js'
import { hostFacts } from '../../../process/identity.js'
import { logPathFor } from '../../../project.js'
import type { Run, SessionRecord, SlurmFacts } from '../../record/schema.js'
import type {
  ActEnv,
  BackendState,
  BackendSupport,
  PreparedRun,
  ReadEnv,
  RunRequest,
  SessionBackend,
  StopOutcome,
} from '../backend.js'
import { packAgentFolder } from './agent-files.js'
import { collectJob, recollectJob, reportOf, runDirOf } from './collect.js'
import { slurmDoctor } from './doctor-lines.js'
import { slurmEngine } from './engine.js'
import { followInForeground } from './follow.js'
import { RUN_FILES } from './job-script.js'
import { jobActive, type SlurmJobIdentity, viewJobs } from './jobs.js'
import { jobExit } from './outcome.js'
import { removeSessionSpool, type Spool } from './spool.js'
import { stopJob } from './stop.js'
import { slurmExec, slurmMissing, toolPath } from './tools.js'

/**
 * Sessions on a Slurm cluster (SPEC §14 `slurm`, docs/backends.md): the engine module (engine.ts and its parts)
 * behind the session interface. The work travels by git bundle through `slurm.spool`; the job script runs the
 * agent on a node and sends the work back; no harness process stays alive per session: the cluster supervises,
 * and the acting commands settle what it ran.
 */
const SLURM_SUPPORT: BackendSupport = {
  interactive: false,
  tmux: false,
  noWorktree: false,
  budget: false,
  intervalCheckpoints: false,
  whileRunning: { checkpoint: false, diff: false, attach: false, send: false },
}

/** What `prepare` made for a run, for its `start`. */
interface PreparedJob {
  spool: Spool
  runDir: string
  branch: string
  startTip: string
  startTree: string
  worktreeState: boolean
  agentFiles: boolean
}

const preparedJobs = new WeakMap<PreparedRun, PreparedJob>()

function identityOf(facts: SlurmFacts): SlurmJobIdentity {
  return { cluster: facts.cluster, job_id: facts.job_id, submit_time: facts.submit_time }
}

/**
 * The spool's run folder with the run's inputs (docs/backends.md, "The spool"): the session's branch and the
 * worktree's uncommitted files as a bundle, the agent folder as a tar.
 */
async function prepareJob(run: RunRequest): Promise<PreparedRun> {
  if (!run.repo) {
    throw new UsageError(
      'the slurm backend needs a worktree: its work travels by git bundle',
      undefined,
      'BACKEND_UNSUPPORTED',
    )
  }
  const engine = slurmEngine(run.config.slurm, run.env)
  const spool = engine.openSpool(run.repo.dir)
  const runDir = engine.makeRunDir(spool, run.id, run.runN)
  const prepared: PreparedRun = {
    record: { backend: 'slurm' },
    undo: async () => {
      if (entryExists(runDir)) removeFolderTree(runDir)
    },
  }
  try {
    const input = await bundleForJob({
      repoDir: run.repo.dir,
      worktreeDir: run.worktreeDir,
      branch: run.repo.branch,
      id: run.id,
      file: join(runDir, RUN_FILES.bundleIn),
      env: run.env,
      tempDir: join(run.harnessDir, 'tmp'),
    })
    const agentFiles = await packAgentFolder(run.agentDir, join(runDir, RUN_FILES.agentIn))
    preparedJobs.set(prepared, { spool, runDir, branch: run.repo.branch, ...input, agentFiles })
    return prepared
  } catch (error) {
    await prepared.undo()
    throw error
  }
}

/** The run's entry: no supervisor of harness's, no pid here; where it was submitted from. */
function runEntry(run: RunRequest): Run {
  const host = hostFacts()
  return {
    n: run.runN,
    kind: run.kind,
    pid: null,
    pid_start_time: null,
    supervisor_pid: null,
    supervisor_start_time: null,
    args: [run.command, ...run.args],
    started_at: new Date().toISOString(),
    ended_at: null,
    exit_code: null,
    signal: null,
    hostname: host.hostname,
    boot_id: host.boot_id,
    pid_namespace: host.pid_namespace,
    detached: run.mode === 'background',
  }
}

/** Submits the prepared job, commits the run with its identity, and (foreground) waits for it. */
async function startJob(
  backend: SessionBackend,
  run: RunRequest,
  prepared: PreparedRun,
  io: Parameters<SessionBackend['start']>[2],
) {
  const job = preparedJobs.get(prepared)
  if (!job) throw new IllegalStateError(`session "${run.id}": its job was not prepared`)
  const engine = slurmEngine(run.config.slurm, run.env)
  const identity = await engine.submit({
    runDir: job.runDir,
    session: run.id,
    run: run.runN,
    branch: job.branch,
    workRel: relative(run.worktreeDir, run.cwd),
    argv: [run.command, ...run.args],
    env: {},
    timeoutMs: run.timeoutMs,
    worktreeState: job.worktreeState,
    agentFiles: job.agentFiles,
    path: null,
  })
  const facts: SlurmFacts = {
    ...identity,
    run: run.runN,
    spool: job.spool.userDir,
    start_tip: job.startTip,
    start_tree: job.startTree,
    env: engine.config.env ?? [],
  }
  let record: SessionRecord
  try {
    record = await io.commit(runEntry(run), { backend: 'slurm', slurm: facts })
  } catch (error) {
    // No record names the job: it must not run on (it is ours: sbatch just printed its id).
    await stopJob(slurmExec(run.env), identity, { graceMs: 0, endMs: 30_000 }).catch(() => undefined)
    throw error
  }
  if (run.mode === 'background') return { record }
  return followInForeground(backend, record, io, slurmExec(run.env))
}

/**
 * Liveness of many Slurm sessions: one `squeue` for all of them (`--me`, their ids: SPEC §9), each job's
 * verdict checked against the identity the sealed record holds; for a job that has ended, its exit-code file in
 * the spool says how (read, not written: the acting commands settle it).
 */
async function slurmLiveness(records: readonly SessionRecord[], env: ReadEnv): Promise<BackendState[]> {
  const states: BackendState[] = records.map(() => ({ kind: 'unverified' }))
  const asked = records
    .map((record, i) => ({ record, i, facts: record.slurm }))
    .filter(
      (entry): entry is typeof entry & { facts: SlurmFacts } => !!entry.facts && entry.record.sealed === true,
    )
  if (asked.length === 0) return states
  let views: Awaited<ReturnType<typeof viewJobs>>
  try {
    views = await viewJobs(
      slurmExec(env.env),
      asked.map(({ facts }) => identityOf(facts)),
    )
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    env.warnOnce('slurm', `${why}: Slurm sessions are shown as their records say (unverified)`)
    return states
  }
  asked.forEach(({ record, i, facts }, k) => {
    const view = views[k] ?? { kind: 'forgotten' as const }
    if (view.kind === 'queued') states[i] = { kind: 'alive', liveness: 'running', queued: view.reason }
    else if (view.kind === 'running') states[i] = { kind: 'alive', liveness: 'running' }
    else if (view.kind !== 'foreign') {
      const exit = jobExit(view, reportOf(runDirOf(record.id, facts)))
      states[i] = exit ? { kind: 'ended', exit } : { kind: 'stale' }
    }
  })
  return states
}

/** kill and pause (docs/backends.md, "Stop"): TERM to the agent through the job script, `scancel` after the grace. */
async function stopSlurmJob(record: SessionRecord, graceMs: number, env: ActEnv): Promise<StopOutcome> {
  const facts = record.slurm
  if (!facts || record.sealed !== true) return { kind: 'unverified' }
  const outcome = await stopJob(slurmExec(env.env), identityOf(facts), { graceMs })
  if (outcome.kind === 'unverified') return outcome
  const exit = jobExit(outcome.view, reportOf(runDirOf(record.id, facts))) ?? {
    exitCode: null,
    signal: 'SIGTERM',
  }
  if (outcome.kind === 'gone') return { kind: 'gone', exit }
  return { kind: 'stopped', exit: { ...exit, stopped: true } }
}

export const slurmBackend: SessionBackend = {
  name: 'slurm',
  supports: SLURM_SUPPORT,
  async check(run) {
    // slurm.spool set, absolute, a folder, outside the repository (exit 2), then sbatch here (exit 5).
    slurmEngine(run.config.slurm, run.env).openSpool(run.repoDir)
    if (!toolPath('sbatch', run.env)) throw slurmMissing('sbatch')
  },
  prepare: prepareJob,
  start(run, prepared, io) {
    return startJob(slurmBackend, run, prepared, io)
  },
  identity(record) {
    const facts = record.slurm
    return facts
      ? `job ${facts.job_id} of cluster ${facts.cluster}, submitted ${facts.submit_time} UTC`
      : null
  },
  liveness: slurmLiveness,
  logs(record, logsDir) {
    const local = logPathFor(logsDir, record.id)
    const facts = record.slurm
    // Until its run is settled, the job's output is in the spool (its --output), growing while it runs.
    const live = facts && !facts.collected ? [join(runDirOf(record.id, facts), RUN_FILES.log)] : []
    return { files: [local, ...live], pollMs: 1000 }
  },
  stop: stopSlurmJob,
  async wait(_record, _env, timeoutMs) {
    // One look at the cluster a second (the caller asks it); nothing to block on but time.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(timeoutMs, 1000))))
    return true
  },
  collect: collectJob,
  uncollected(record) {
    const collected = record.slurm?.collected
    return collected?.kind === 'failed'
      ? `the work of its last job is not back yet (${String(collected.reason ?? 'collection failed')})`
      : null
  },
  async resume(record, env) {
    await recollectJob(record, env)
  },
  async destroy(record, env) {
    const facts = record.slurm
    if (!facts || record.sealed !== true) return
    // A job still queued or running (a session recovered on the user's word) is stopped: none is left.
    const exec = slurmExec(env.env)
    const [view] = await viewJobs(exec, [identityOf(facts)]).catch(() => [undefined])
    if (view && jobActive(view)) await stopJob(exec, identityOf(facts), { graceMs: 0 })
    removeSessionSpool({ root: facts.spool, userDir: facts.spool }, record.id)
  },
  async doctor(request) {
    return slurmDoctor(request, toolPath('sbatch', request.env) !== null)
  },
}
