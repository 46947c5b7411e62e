import { dirname, join } from 'node:path'
import { type ChangedFiles, filesModified } from '../../git/diff.js'
import { readWorktreeState, type WorktreeState } from '../../git/snapshot.js'
import type { AgentExit } from '../../process/supervisor.js'
import { backendNamed } from '../backends/index.js'
import type { SessionRecord } from '../record/schema.js'
import type { SessionStore } from '../record/store.js'
import { takeCheckpoint } from '../work/checkpoints.js'
import type { RunPlan } from './run-plan.js'

// What a run's supervisor does once the agent has exited, before the outcome is recorded (runner.ts): the
// container's work collected, the run-end checkpoint and files_modified. Each takes the run end's signal: a stop
// asked for meanwhile gives them up (a git hung on what the agent left never holds the run for good).

/**
 * The end of a run whose backend has something to bring back (docs/backends.md): a container's agent commits
 * come back to the branch and its container is removed. Returns what the run's final record gains (how its work
 * was collected): written with the outcome in one update, for which room is kept on a full disk; and what is
 * still being released (the container's removal), to be awaited before that update.
 */
export async function settleRun(
  plan: RunPlan,
  store: SessionStore,
  exit: AgentExit,
  signal: AbortSignal,
): Promise<{ change: (record: SessionRecord) => SessionRecord; released: Promise<unknown> }> {
  const record = store.get(plan.id)
  let released: Promise<unknown> = Promise.resolve()
  if (!record) return { change: (current) => current, released }
  const backend = await backendNamed(plan.backend)
  const env = plan.supervisorEnv ?? plan.env
  const harnessDir = dirname(plan.sessionsDir)
  // Only after an agent (a container's client) that ended by itself: one that was stopped, or an engine's own
  // error (125 and up), may leave a container running until its removal, which then comes before the run-end
  // checkpoint reads the worktree.
  const byItself = exit.signal === null && !exit.stopped && exit.exitCode !== null && exit.exitCode < 125
  const alongside = byItself
    ? (release: Promise<void>) => {
        released = release
      }
    : undefined
  const change = await backend
    .collect(record, { env, harnessDir, store, now: new Date(), signal }, { ours: true, alongside })
    .catch((error: unknown) => {
      // Never the run's outcome lost for it: the collection's own failure is what the record says.
      const reason = error instanceof Error ? error.message : String(error)
      return (current: SessionRecord) => ({ ...current, log_error: current.log_error ?? reason })
    })
  return { change, released }
}

/** A checkpoint must never cost a run its outcome: failures are noted in the log only. */
export async function checkpointQuietly(
  plan: RunPlan,
  store: SessionStore,
  trigger: 'interval' | 'run-end',
  state?: WorktreeState,
  signal?: AbortSignal,
): Promise<void> {
  if (!plan.checkpoints) return
  try {
    // `<project>/.harness/sessions`: the project's top is the repository a record without base_dir ran in.
    const projectRoot = dirname(dirname(plan.sessionsDir))
    await takeCheckpoint(store, plan.id, {
      trigger,
      onlyIfChanged: true,
      env: plan.env,
      state,
      signal,
      projectRoot,
      now: new Date(),
    })
  } catch {}
}

/**
 * The worktree as the run left it, when both the run-end checkpoint and files_modified need it; undefined
 * otherwise, or when it cannot be read (each then reads it itself, or fails quietly as before).
 */
export async function worktreeAtEnd(plan: RunPlan, signal: AbortSignal): Promise<WorktreeState | undefined> {
  if (!plan.checkpoints || !plan.changesAgainst) return undefined
  try {
    return await readWorktreeState(plan.changesAgainst.dir, {
      env: plan.env,
      tempDir: join(dirname(plan.sessionsDir), 'tmp'),
      signal,
    })
  } catch {
    return undefined
  }
}

/** Paths changed against the base commit (committed, uncommitted, untracked); undefined when git cannot tell. */
export async function changedFiles(
  plan: RunPlan,
  state: WorktreeState | undefined,
  signal: AbortSignal,
): Promise<ChangedFiles | undefined> {
  if (!plan.changesAgainst) return undefined
  try {
    return await filesModified(
      plan.changesAgainst.dir,
      plan.changesAgainst.base,
      { env: plan.env, signal },
      state,
    )
  } catch {
    return undefined // a removed worktree or a broken repository must not keep the outcome from being recorded
  }
}
