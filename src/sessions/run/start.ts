import { ExitRequest, IllegalStateError, UsageError } from '../../errors.js'
import type { ProjectPaths } from '../../project.js'
import { usesAgentDir } from '../../providers/args.js'
import type { SessionEnv } from '../ports.js'
import { ensureProject } from '../project-index.js'
import { ensureAgentDir, removeAgentDir } from '../record/agent-files.js'
import type { RecordStore as SessionStore } from '../record/record-store.js'
import type { Run, SessionRecord } from '../record/schema.js'
import { taskDiffers } from '../record/task.js'
import { maybeStartAutoCleanup } from '../removal/auto-cleanup.js'
import { announce, launch, type RunOutcome, runRequest, showPromptToPaste } from './launch.js'
import { newSessionRecord, resumeRefusal } from './plan.js'
import {
  checkStartOptions,
  type PreparedStart,
  prepareStart,
  type StartOptions,
  sessionMetadata,
} from './prepare.js'
import { resumeSession } from './resume.js'
import { tmuxPlace } from './run-mode.js'
import { runPlan } from './run-plan.js'
import { abortOnSignals, type SignalGuard, signalExit, throwIfSignalled } from './signal-guard.js'
import { claimSetUp, prepareWorkspace, type Workspace } from './workspace.js'

// The run services, one module each in this folder; commands reach them here.
export { dryRunSession, type RunDryRun } from './dry-run.js'
export type { RunOutcome } from './launch.js'
export type { StartOptions } from './prepare.js'
export { type ResumeOptions, resumeSession } from './resume.js'

/** `harness run`: a new session (or, with --session-id of an existing one, its resume). */
export async function startSession(ctx: SessionEnv, options: StartOptions): Promise<RunOutcome> {
  checkStartOptions(options)
  const paths = await ctx.project()
  const store = await ctx.store()
  if (options.sessionId && store.exists(options.sessionId)) {
    const refusal = resumeRefusal(options.sessionId, options)
    if (refusal) throw refusal
    const existing = store.get(options.sessionId)
    if (existing && taskDiffers(existing.task_hash, options.prompt.join(' ').trim())) {
      ctx.warn(`the task differs from session ${existing.id}'s: it is sent to the agent as the next message`)
    }
    return resumeSession(ctx, options.sessionId, options.prompt, {
      detach: options.detach,
      exact: true,
      checkpoint: options.restoreCheckpoint,
      budget: options.budget,
      timeoutMs: options.timeoutMs,
    })
  }
  if (options.restoreCheckpoint !== undefined) {
    throw new UsageError(
      '--restore-checkpoint needs --session-id of an existing session',
      'see "harness session checkpoints <id>"',
    )
  }
  const prepared = await prepareStart(ctx, paths, store, options)
  // Checked before anything is made: without tmux, --tmux is exit 5 and nothing is left behind (the backend's
  // own needs, its engine or cluster, were checked by prepareStart).
  if (prepared.tmux) await tmuxPlace(ctx, 'check')
  await ensureProject(ctx.env, paths)
  return makeAndLaunch(ctx, { paths, store, options, prepared })
}

/**
 * Makes the session's worktree, agent folder and placement, then starts the agent; the session is on record
 * from the moment the run begins. Until then a stop signal undoes the set-up instead of killing harness midway
 * (which would leave a worktree and branch that no record owns), and so does any failure.
 */
async function makeAndLaunch(
  ctx: SessionEnv,
  start: { paths: ProjectPaths; store: SessionStore; options: StartOptions; prepared: PreparedStart },
): Promise<RunOutcome> {
  const { paths, options, prepared } = start
  const { config, provider, id } = prepared
  const guard = abortOnSignals()
  let workspace: Workspace | undefined
  let committed = false
  let claim: { release(): void } | undefined
  let undoPlacement: (() => Promise<void>) | undefined
  try {
    // Everything made from here on under this id is this run's own, and so is what it undoes on failure.
    claim = await claimSetUp(paths.sessionsDir, id)
    if (start.store.exists(id)) {
      throw new IllegalStateError(
        `session "${id}" was just started by another command`,
        undefined,
        'SESSION_BUSY',
      )
    }
    workspace = await prepareWorkspace(ctx, paths, config, id, options, guard)
    if (usesAgentDir(provider)) ensureAgentDir(paths.harnessDir, id, true)
    const place = prepared.tmux ? await tmuxPlace(ctx, id) : null
    const record = newRecord(ctx, prepared, workspace, options, place)
    const { backend } = prepared
    const plan = runPlan(ctx, {
      paths,
      session: record,
      runN: 1,
      kind: 'start',
      invocation: prepared.invocation,
      mode: prepared.mode,
      provider,
      config,
      tmux: place,
      budget: prepared.budget,
      pricing: prepared.pricing,
      timeoutMs: options.timeoutMs,
      backend: { name: backend.name, intervalCheckpoints: backend.supports.intervalCheckpoints },
    })
    const request = runRequest(plan, record, paths, config, { image: options.image, engine: options.engine })
    const placed = await backend.prepare(request)
    undoPlacement = placed.undo
    showPromptToPaste(ctx, provider, prepared.mode, prepared.agentPrompt)
    const begin = async (run: Run, fields: Partial<SessionRecord>) => {
      throwIfSignalled(guard)
      const created = await start.store.create({ ...record, ...placed.record, ...fields, runs: [run] })
      committed = true
      claim?.release()
      // The run is on record: from now on the supervisor's own handlers decide what a signal means.
      guard.dispose()
      announce(ctx, created, prepared.mode)
      await maybeStartAutoCleanup(ctx, paths, config)
      return created
    }
    return await launch(ctx, { backend, request, prepared: placed, plan }, begin)
  } catch (error) {
    throw signalledError(guard, committed, error)
  } finally {
    guard.dispose()
    // Only a run that holds the claim made anything under this id: a refused one leaves everything as it is.
    if (!committed && claim) {
      await undoPlacement?.().catch(() => {})
      await workspace?.undo()
      removeAgentDir(paths.harnessDir, id)
    }
    claim?.release()
  }
}

/** A failure after a stop signal, before the run was on record, ends harness by that signal. */
function signalledError(guard: SignalGuard, committed: boolean, error: unknown): unknown {
  const received = guard.received()
  return received && !committed && !(error instanceof ExitRequest) ? signalExit(received) : error
}

/** The new session's record, before its first run. */
function newRecord(
  ctx: SessionEnv,
  prepared: PreparedStart,
  workspace: Workspace,
  options: StartOptions,
  place: { socket: string; session: string } | null,
) {
  const record = newSessionRecord({
    id: prepared.id,
    name: options.name,
    provider: prepared.provider.name,
    permission: prepared.permission,
    workspace,
    prompt: prepared.prompt,
    model: prepared.model,
    extraArgs: options.extraArgs,
    agentSessionId: prepared.agentSessionId,
    contextFrom: prepared.contextFrom,
    tmux: place,
    metadata: sessionMetadata(),
    now: new Date(ctx.clock.now()),
  })
  if (prepared.budget) record.budget_usd = prepared.budget.limit_usd
  return record
}
