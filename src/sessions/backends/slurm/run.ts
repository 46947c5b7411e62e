import { join } from 'node:path'
import type { SlurmConfig } from '../../../config.js'
import { jobScript, RUN_FILES } from './job-script.js'
import type { SlurmJobIdentity } from './jobs.js'
import { jobTimeLimit, sendBackLead } from './options.js'
import { stageRun } from './spool.js'
import { submitJob } from './submit.js'
import type { SlurmExec } from './tools.js'

/** One run of a session on the cluster: what `submitRun` needs besides the run's folder it was given. */
export interface RunSubmission {
  /** The run's spool folder (makeRunDir), holding `in.bundle` (and `agent-in.tar`) already. */
  runDir: string
  session: string
  run: number
  /** The session's branch, as `in.bundle` holds it. */
  branch: string
  /** Where the agent starts, relative to the repository's top ('' for the top). */
  workRel: string
  argv: readonly string[]
  /** harness's own variables for the agent; never a secret (secrets go by name: `slurm.env`). */
  env: Readonly<Record<string, string>>
  /** `run --timeout` (ms), or null: `slurm.time`. */
  timeoutMs: number | null
  worktreeState: boolean
  agentFiles: boolean
  /** The agent's PATH on the node; null keeps the job's own. */
  path: string | null
  /** Seconds of TERM before the time limit; unset: sendBackLead of the limit. */
  sendBackSeconds?: number
}

/**
 * Writes the run's argv, variables and job script into its spool folder and submits the script: the job's
 * identity, read back from Slurm. Every session gets the configured partition, account, time and options.
 */
export async function submitRun(
  exec: SlurmExec,
  config: SlurmConfig,
  submission: RunSubmission,
): Promise<SlurmJobIdentity> {
  const { runDir } = submission
  const script = jobScript({
    session: submission.session,
    run: submission.run,
    runDir,
    scratch: config.scratch ?? null,
    branch: submission.branch,
    workRel: submission.workRel,
    worktreeState: submission.worktreeState,
    agentFiles: submission.agentFiles,
    path: submission.path,
    stepSeconds: 600,
  })
  stageRun(runDir, { argv: submission.argv, env: submission.env, script })
  const time = jobTimeLimit(submission.timeoutMs, config.time)
  return submitJob(exec, {
    script: join(runDir, RUN_FILES.script),
    jobName: `harness-${submission.session}`,
    output: join(runDir, RUN_FILES.log),
    error: join(runDir, RUN_FILES.jobErr),
    chdir: config.scratch ?? runDir,
    time,
    partition: config.partition,
    account: config.account,
    options: config.options ?? [],
    envNames: config.env ?? [],
    sendBackSeconds: submission.sendBackSeconds ?? sendBackLead(time),
  })
}
