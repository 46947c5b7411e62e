import { ExternalToolError } from '../../../errors.js'
import { type SlurmJobIdentity, SlurmJobIdentitySchema, squeueRows } from './jobs.js'
import { guardOptions } from './options.js'
import { type SlurmExec, slurmFailure } from './tools.js'

/** What one `sbatch` of harness's job script says. */
export interface SubmitRequest {
  /** The job script in the spool (job-script.ts). */
  script: string
  jobName: string
  /** The job's output (the agent's log) and the script's own messages, files in the spool made beforehand. */
  output: string
  error: string
  /** Where the job starts on the node: scratch (`slurm.scratch`), else the run's spool folder. */
  chdir: string
  /** `--time`, or null for the partition's default. */
  time: string | null
  partition?: string
  account?: string
  /** `slurm.options`, checked by guardOptions. */
  options: readonly string[]
  /** `slurm.env`: names only; `sbatch` runs with their values and Slurm's variables alone (submitEnvironment). */
  envNames: readonly string[]
  /** Seconds before the time limit at which Slurm sends TERM to the job script, so it can send the work back. */
  sendBackSeconds: number
}

/**
 * The argv of `sbatch` for harness's job script. The user's `slurm.options` come first, so that harness's own
 * options after them win; the script last, after `--`.
 */
export function sbatchArgs(request: SubmitRequest): string[] {
  return [
    ...guardOptions(request.options),
    '--parsable',
    // Slurm requeues by default (a node failure, a preemption): the agent would run twice.
    '--no-requeue',
    // TERM to the job script alone (B:), that long before the limit: it stops the agent and sends the work back.
    `--signal=B:TERM@${Math.max(1, Math.round(request.sendBackSeconds))}`,
    // ALL of an environment of Slurm's variables and the names listed (submitEnvironment; none in the argv):
    // NONE or a list of names makes slurmd load the login environment first, a second (login-env.ts).
    '--export=ALL',
    ...(request.time ? [`--time=${request.time}`] : []),
    ...(request.partition ? [`--partition=${request.partition}`] : []),
    ...(request.account ? [`--account=${request.account}`] : []),
    `--job-name=${request.jobName}`,
    `--output=${request.output}`,
    `--error=${request.error}`,
    // The files were made 0600 beforehand; appending keeps them as they are.
    '--open-mode=append',
    `--chdir=${request.chdir}`,
    '--',
    request.script,
  ]
}

/** `sbatch --parsable` prints `<job id>` or `<job id>;<cluster>`: the id. */
export function parseSbatch(stdout: string): string | null {
  const line = stdout.trim().split('\n').pop() ?? ''
  const id = /^([1-9][0-9]*)(?:;[A-Za-z0-9_.-]+)?$/.exec(line.trim())?.[1]
  return id ?? null
}

/**
 * Submits the job and reads its identity back from Slurm at once: cluster, id and submit time, as the same
 * `squeue` that later reports its liveness prints them (so they compare equal byte for byte). `scontrol show
 * job` has the submit time but not the cluster's name in 22.05.
 */
export async function submitJob(exec: SlurmExec, request: SubmitRequest): Promise<SlurmJobIdentity> {
  const result = await exec('sbatch', sbatchArgs(request), { exportOnly: request.envNames })
  if (result.exitCode !== 0) throw slurmFailure('sbatch', result, 'submit the job')
  const jobId = parseSbatch(result.stdout)
  if (!jobId) {
    throw new ExternalToolError(
      `sbatch gave no job id (it printed "${result.stdout.trim().slice(0, 80)}")`,
      undefined,
      'SLURM_FAILED',
    )
  }
  // A job whose identity cannot be read would run with no record to name it: it is cancelled (it is ours: the id
  // is the one sbatch just printed) before the error is shown.
  const identity = await squeueRows(exec, [jobId]).then(
    (rows) => {
      const row = rows.get(jobId)
      return SlurmJobIdentitySchema.safeParse(
        row && { cluster: row.cluster, job_id: jobId, submit_time: row.submitTime },
      )
    },
    (error: unknown) => ({ success: false as const, error }),
  )
  if (identity.success) return identity.data
  await exec('scancel', ['--', jobId]).catch(() => undefined)
  if (identity.error instanceof ExternalToolError) throw identity.error
  throw new ExternalToolError(
    `Slurm does not report job ${jobId} as it just accepted it (cancelled)`,
    'check "squeue --me"',
    'SLURM_FAILED',
  )
}
