import type { RunExit } from '../../record/outcome.js'
import type { SlurmJobView } from './jobs.js'
import type { RunReport } from './spool.js'

/**
 * How a job's run ended, for the record (docs/backends.md, "Identity and liveness"), from what Slurm says of the
 * job and what the job wrote in the spool (its exit-code file is the truth; Slurm's wait status a fallback). Pure.
 * Null while the job has not ended, and for a job Slurm forgot that left no exit code: nothing says how it ended
 * (the session is then stale: PAUSED, resumable).
 */
export function jobExit(view: SlurmJobView, report: RunReport | null): RunExit | null {
  if (view.kind === 'queued' || view.kind === 'running' || view.kind === 'foreign') return null
  const code = report?.exitCode ?? null
  // harness's own stop (kill, pause): the committed request decides KILLED or PAUSED.
  if (report?.endedBy === 'stop') return { exitCode: code, signal: null, stopped: true }
  // A node that failed, a preemption: PAUSED, resumable (the job is never requeued: --no-requeue). Slurm's TERM
  // then reaches the job script as it does before a time limit, so its `ended-by` says timeout: Slurm knows.
  if (view.kind === 'interrupted') return { exitCode: code, signal: null, pausedFor: 'interrupted' }
  // Slurm's time limit (its TERM before it, or the limit itself): PAUSED `timeout`, the work sent back.
  if (view.kind === 'timeout' || report?.endedBy === 'timeout') {
    return { exitCode: code, signal: null, pausedFor: 'timeout' }
  }
  if (report?.setupError) return { exitCode: code ?? 1, signal: null, spawnError: report.setupError }
  if (code !== null) return { exitCode: code, signal: null }
  if (view.kind === 'exited' && view.exitCode !== null) return { exitCode: view.exitCode, signal: null }
  // Cancelled before the agent wrote an exit code (queued, or killed by someone else): ended by a signal.
  if (view.kind === 'cancelled') return { exitCode: null, signal: 'SIGTERM' }
  return null
}
