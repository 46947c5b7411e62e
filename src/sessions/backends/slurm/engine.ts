import { SlurmConfigSchema } from '../../../config.js'
import { type SlurmCheck, type SubmitTestInput, slurmChecks, submitTest } from './doctor.js'
import { type SlurmJobIdentity, type SlurmJobView, viewJob, viewJobs } from './jobs.js'
import { type RunSubmission, submitRun } from './run.js'
import { makeRunDir, openSpool, readRunReport, removeSessionSpool } from './spool.js'
import { type StopTiming, stopJob } from './stop.js'
import { type SlurmExec, slurmExec } from './tools.js'

/**
 * The Slurm engine (docs/backends.md, "The Slurm backend"): everything
 * the backend does on a cluster, for one configuration (`slurm.*`, parsed here) and one environment. The
 * backend seam (SPEC §14) puts it behind the session interface: start = openSpool + makeRunDir + (the bundle
 * in) + submit; liveness = views (one `squeue` for all sessions); stop; collect = report + the bundle out;
 * destroy = removeSession.
 */
export function slurmEngine(configInput: unknown, env: NodeJS.ProcessEnv, exec: SlurmExec = slurmExec(env)) {
  const config = SlurmConfigSchema.parse(configInput ?? {})
  return {
    config,
    openSpool: (repoDir: string | null) => openSpool(config.spool, repoDir),
    makeRunDir,
    submit: (submission: RunSubmission): Promise<SlurmJobIdentity> => submitRun(exec, config, submission),
    views: (identities: readonly SlurmJobIdentity[]): Promise<SlurmJobView[]> => viewJobs(exec, identities),
    view: (identity: SlurmJobIdentity): Promise<SlurmJobView> => viewJob(exec, identity),
    stop: (identity: SlurmJobIdentity, timing: StopTiming) => stopJob(exec, identity, timing),
    report: readRunReport,
    removeSession: removeSessionSpool,
    checks: (): Promise<SlurmCheck[]> => slurmChecks(exec, config),
    submitTest: (input: Omit<SubmitTestInput, 'config'>): Promise<SlurmCheck> =>
      submitTest(exec, { ...input, config }),
  }
}
