import { jobActive, type SlurmJobIdentity, type SlurmJobView, viewJob } from './jobs.js'
import { type SlurmExec, slurmFailure } from './tools.js'

/** How a stop of a Slurm job ended. */
export type SlurmStopOutcome =
  /** The job was running or queued and has now ended (`view`: how Slurm reports its end). */
  | { kind: 'stopped'; view: SlurmJobView; forced: boolean }
  /** It had ended already, or Slurm no longer knows it: nothing was signalled. */
  | { kind: 'gone'; view: SlurmJobView }
  /** Slurm reports another job under that id (another submit time or cluster): never signalled. */
  | { kind: 'unverified' }

export interface StopTiming {
  /** Between the TERM to the agent and the `scancel` of the whole job. */
  graceMs: number
  /** How long to wait for the job to end after `scancel` (Slurm's `KillWait` and more): a ceiling. */
  endMs?: number
  /** How often Slurm is asked meanwhile. */
  pollMs?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Stops a job harness submitted (SPEC §14, "kill"), acting only while Slurm reports the very identity the
 * record holds (checked before every signal):
 * 1. a queued job is cancelled (no agent runs yet);
 * 2. a running one: USR1 to the job script alone (`scancel --batch`; Slurm's own scancel signals only the batch
 *    shell anyway), which sends TERM to the agent's whole process group and marks the end as a stop; the script
 *    then sends the work back and ends;
 * 3. still running after the grace: `scancel` of the job (TERM to every process of it, the script kills the
 *    agent's group at once; `KillWait` later Slurm kills whatever is left, through the job's cgroup).
 * Returns once Slurm reports the job ended, or after `endMs`.
 */
export async function stopJob(
  exec: SlurmExec,
  identity: SlurmJobIdentity,
  timing: StopTiming,
): Promise<SlurmStopOutcome> {
  const pollMs = timing.pollMs ?? 100
  const first = await viewJob(exec, identity)
  if (first.kind === 'foreign') return { kind: 'unverified' }
  if (!jobActive(first)) return { kind: 'gone', view: first }
  const ended = async (ceilingMs: number): Promise<SlurmJobView | 'foreign' | null> => {
    const deadline = Date.now() + ceilingMs
    for (;;) {
      const view = await viewJob(exec, identity)
      if (view.kind === 'foreign') return 'foreign'
      if (!jobActive(view)) return view
      if (Date.now() >= deadline) return null
      await sleep(pollMs)
    }
  }
  if (first.kind === 'running') {
    await scancel(exec, identity, ['--batch', '--signal=USR1'])
    const view = await ended(timing.graceMs)
    if (view === 'foreign') return { kind: 'unverified' }
    if (view) return { kind: 'stopped', view, forced: false }
    // Checked again: the job the grace was given to, not one that took its id meanwhile.
    const still = await viewJob(exec, identity)
    if (still.kind === 'foreign') return { kind: 'unverified' }
    if (!jobActive(still)) return { kind: 'stopped', view: still, forced: false }
  }
  await scancel(exec, identity, [])
  const view = await ended(timing.endMs ?? 120_000)
  if (view === 'foreign') return { kind: 'unverified' }
  return { kind: 'stopped', view: view ?? (await viewJob(exec, identity)), forced: first.kind === 'running' }
}

/**
 * `scancel` of one job, the user's own only (`--me`: another user's job under a forged id is refused by Slurm
 * too). A job that ended meanwhile is no failure.
 */
async function scancel(exec: SlurmExec, identity: SlurmJobIdentity, how: string[]): Promise<void> {
  const result = await exec('scancel', ['--me', ...how, '--', identity.job_id])
  if (result.exitCode === 0) return
  if (/already completing or completed|Invalid job id|Job has already finished/i.test(result.stderr)) return
  throw slurmFailure('scancel', result, `stop job ${identity.job_id}`)
}
