import { ExitCode, HarnessError, IllegalStateError } from '../../errors.js'
import { readerOf } from '../backends/index.js'
import { readEnvOf } from '../backends/read-env.js'
import type { SessionEnv } from '../ports.js'
import { getSession, resolveSessionId, seen } from '../query/query.js'
import type { SessionView } from '../query/reconcile.js'
import { lastRun, runProcesses } from '../record/liveness.js'
import { signalExitCode } from '../record/outcome.js'
import type { SessionRecord } from '../record/schema.js'
import { ForeignSessionError } from '../record/seal.js'
import { watchRecord } from './watch.js'

/** What `wait` exits with for a session PAUSED for these reasons (SPEC §8), when the record keeps no code. */
const PAUSED_EXIT_CODES: Record<string, number> = {
  budget: ExitCode.BudgetReached,
  timeout: ExitCode.Timeout,
  interrupt: 130,
  hangup: 129,
  terminated: 143,
}

/**
 * The exit code `session wait` reports for a finished session (README.md, "Exit codes"): its recorded code (an
 * interrupted run keeps 130, 129, 143 or 124); for a pause, 6 at its budget, else 4.
 */
export function waitExitCode(record: SessionRecord): number {
  if (typeof record.exit_code === 'number') return record.exit_code
  if (record.status === 'PAUSED') return PAUSED_EXIT_CODES[record.stop_reason ?? ''] ?? ExitCode.IllegalState
  return signalExitCode(lastRun(record)?.signal) ?? ExitCode.Failure
}

class WaitTimeoutError extends HarnessError {
  constructor(id: string, ms: number) {
    super('WAIT_TIMEOUT', `session "${id}" still running after ${ms} ms`, ExitCode.Timeout)
  }
}

/**
 * A reading command never waits on what it cannot verify (docs/security.md, "Wait"): a foreign record's status is
 * a claim (a clone's RUNNING record would hold a CI job for ever, its COMPLETED one would pass it), and an
 * unverified RUNNING one has no process harness can see end. Checked at every look: a record swapped meanwhile
 * is refused too.
 */
async function refuseToWait(view: SessionView): Promise<void> {
  if (view.sealed !== true) {
    throw new ForeignSessionError(view.id, 'waits on it', view.seal_problem ?? undefined)
  }
  if (view.status === 'RUNNING' && view.liveness === 'unverified') {
    throw new IllegalStateError(
      `session "${view.id}" cannot be verified (no process start times, recorded on another host or pid namespace, or its engine cannot say): harness never waits on it`,
      `if it is really gone, run "harness session recover ${view.id}"; then wait returns its status`,
      'SESSION_UNVERIFIED',
    )
  }
}

/**
 * `session wait`: blocks until the session is no longer RUNNING, reading only (SPEC §4): a stale one is
 * reconciled on the way (the one write), and a run that ended with nobody to record it (a container whose
 * client died, a Slurm job) returns with the outcome its backend reads, left for an acting command to settle.
 */
export async function waitForSession(
  ctx: SessionEnv,
  input: string,
  timeoutMs?: number,
): Promise<SessionView> {
  const store = await ctx.store()
  const id = resolveSessionId(store, input)
  const { clock } = ctx
  const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : clock.now() + timeoutMs
  // The final write wakes the wait at once; the poll (backing off to 100 ms) covers a missed event.
  const changes = watchRecord(store, id)
  try {
    for (let delay = 10; ; delay = Math.min(delay * 2, 100)) {
      const view = await getSession(ctx, id)
      await refuseToWait(view)
      if (view.status !== 'RUNNING') return view
      const left = deadline - clock.now()
      if (left <= 0) throw new WaitTimeoutError(id, timeoutMs ?? 0)
      // No supervisor of harness's will write the end: its backend knows when it comes (the engine's wait).
      const [check, now] = seen(ctx)
      const supervisor = runProcesses(view).supervisor
      const supervised = supervisor !== null && check(supervisor) === 'alive'
      const waited =
        !supervised && (await (await readerOf(view)).wait(view, readEnvOf(store, check, now), left))
      if (!waited) await changes.next(Math.min(delay, Math.max(0, left)))
    }
  } finally {
    changes.close()
  }
}
