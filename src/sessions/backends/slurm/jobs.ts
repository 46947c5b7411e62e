import * as z from 'zod/mini'
import { type SlurmExec, slurmFailure } from './tools.js'

/**
 * A job as harness knows it (in the sealed record): the cluster's name, the job id and the time Slurm says it
 * was submitted. It plays the role of pid + start time: a job id alone is reused (after `MaxJobId`, or on
 * another cluster the same `sbatch` may reach), the three together are not.
 */
export const SlurmJobIdentitySchema = z.object({
  cluster: z.string().check(z.regex(/^[A-Za-z0-9_.-]{1,64}$/)),
  job_id: z.string().check(z.regex(/^[1-9][0-9]{0,11}$/)),
  submit_time: z.string().check(z.regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/)),
})
export type SlurmJobIdentity = z.infer<typeof SlurmJobIdentitySchema>

/** One line of `squeue`, as parsed. */
export interface SqueueRow {
  jobId: string
  cluster: string
  submitTime: string
  state: string
  reason: string
  /** The job's wait status as Slurm keeps it (768 is exit 3; 9 is SIGKILL): the exit code file is the truth. */
  waitStatus: number | null
}

/**
 * The fields of the one `squeue` call (text: `squeue --json` ignores `-j` and would read the whole cluster).
 * `-O` rather than `-o`: only it has the cluster's name and the exit code. `|` ends each field: no field of
 * these can hold one.
 */
const FIELDS = ['JobID', 'Cluster', 'SubmitTime', 'State', 'Reason', 'exit_code']
const FORMAT = FIELDS.map((field) => `${field}:|`).join(',')

/** The argv of one `squeue` for many jobs: only the user's own (`--me`), in every state (`-t all`). */
export function squeueArgs(jobIds: readonly string[]): string[] {
  return ['--me', '--noheader', '--states=all', `--jobs=${jobIds.join(',')}`, `--Format=${FORMAT}`]
}

/** `squeue`'s lines (squeueArgs); a line that does not have the form is skipped, never guessed at. */
export function parseSqueue(text: string): SqueueRow[] {
  const rows: SqueueRow[] = []
  for (const line of text.split('\n')) {
    const fields = line.split('|').map((field) => field.trim())
    if (fields.length < FIELDS.length) continue
    const [jobId = '', cluster = '', submitTime = '', state = '', reason = '', exit = ''] = fields
    if (!/^[1-9][0-9]*$/.test(jobId) || !/^[A-Z_]+$/.test(state)) continue
    rows.push({
      jobId,
      cluster,
      submitTime,
      state,
      reason,
      waitStatus: /^\d+$/.test(exit) ? Number(exit) : null,
    })
  }
  return rows
}

/** A wait status as an exit code: the code, or 128 + the signal that ended it (as a shell reports it). */
export function exitCodeOf(waitStatus: number): number {
  const signal = waitStatus & 0x7f
  return signal ? 128 + signal : (waitStatus >> 8) & 0xff
}

/**
 * What Slurm says of a job harness submitted (SPEC §14), the verdict a caller settles from:
 * - `queued`: PENDING (or about to start), with Slurm's reason (`Resources`, `Priority`, `BeginTime`, ...);
 * - `running`: the job script runs (or is finishing: COMPLETING, or suspended);
 * - `exited`: COMPLETED, FAILED or OUT_OF_MEMORY: the exit code file in the spool is the truth, `exitCode`
 *   (from the wait status) only a fallback;
 * - `timeout`: Slurm's own time limit ended it (TIMEOUT, DEADLINE): PAUSED `timeout`;
 * - `interrupted`: NODE_FAIL, PREEMPTED, BOOT_FAIL: PAUSED, resumable;
 * - `cancelled`: CANCELLED (`scancel`, by harness or by anyone);
 * - `forgotten`: Slurm no longer knows the job (past `MinJobAge`): settled from the spool's exit code file;
 * - `foreign`: the id is known with another submit time or cluster: another job, never acted on.
 */
export type SlurmJobView =
  | { kind: 'queued'; reason: string }
  | { kind: 'running'; state: string }
  | { kind: 'exited'; state: string; exitCode: number | null }
  | { kind: 'timeout'; state: string }
  | { kind: 'interrupted'; state: string }
  | { kind: 'cancelled' }
  | { kind: 'forgotten' }
  | { kind: 'foreign' }

const QUEUED = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD'])
const EXITED = new Set(['COMPLETED', 'FAILED', 'OUT_OF_MEMORY', 'SPECIAL_EXIT'])
const TIMED_OUT = new Set(['TIMEOUT', 'DEADLINE'])
const INTERRUPTED = new Set(['NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL'])
const CANCELLED = new Set(['CANCELLED', 'REVOKED'])

/** The verdict on `identity` from the row Slurm reported for its id (undefined: none). */
export function viewOf(identity: SlurmJobIdentity, row: SqueueRow | undefined): SlurmJobView {
  if (!row) return { kind: 'forgotten' }
  if (row.cluster !== identity.cluster || row.submitTime !== identity.submit_time) return { kind: 'foreign' }
  const { state } = row
  if (QUEUED.has(state)) return { kind: 'queued', reason: state === 'PENDING' ? row.reason : state }
  if (EXITED.has(state)) {
    return { kind: 'exited', state, exitCode: row.waitStatus === null ? null : exitCodeOf(row.waitStatus) }
  }
  if (TIMED_OUT.has(state)) return { kind: 'timeout', state }
  if (INTERRUPTED.has(state)) return { kind: 'interrupted', state }
  if (CANCELLED.has(state)) return { kind: 'cancelled' }
  // RUNNING, COMPLETING, SUSPENDED, STOPPED, SIGNALING, STAGE_OUT, RESIZING, and any state a later Slurm adds:
  // not ended, so nothing is settled on its account.
  return { kind: 'running', state }
}

/** `squeue` for these ids: its rows by job id. A list of ids none of which Slurm knows is an empty map. */
export async function squeueRows(
  exec: SlurmExec,
  jobIds: readonly string[],
): Promise<Map<string, SqueueRow>> {
  const rows = new Map<string, SqueueRow>()
  if (jobIds.length === 0) return rows
  const result = await exec('squeue', squeueArgs([...new Set(jobIds)]))
  // squeue fails when it knows none of the ids it was given (one or all forgotten): nothing to report.
  if (result.exitCode !== 0 && /Invalid job id specified/i.test(result.stderr)) return rows
  if (result.exitCode !== 0) throw slurmFailure('squeue', result, 'list the jobs')
  for (const row of parseSqueue(result.stdout)) rows.set(row.jobId, row)
  return rows
}

/** Liveness of many jobs in one `squeue` call (SPEC §14): each identity's verdict, in the order given. */
export async function viewJobs(
  exec: SlurmExec,
  identities: readonly SlurmJobIdentity[],
): Promise<SlurmJobView[]> {
  const rows = await squeueRows(
    exec,
    identities.map((identity) => identity.job_id),
  )
  return identities.map((identity) => viewOf(identity, rows.get(identity.job_id)))
}

/** One job's verdict: the job, only if Slurm reports the very identity the record holds. */
export async function viewJob(exec: SlurmExec, identity: SlurmJobIdentity): Promise<SlurmJobView> {
  const [view] = await viewJobs(exec, [identity])
  return view ?? { kind: 'forgotten' }
}

/** Whether a verdict is of a job that has not ended (one a stop still has to end). */
export function jobActive(view: SlurmJobView): boolean {
  return view.kind === 'queued' || view.kind === 'running'
}
