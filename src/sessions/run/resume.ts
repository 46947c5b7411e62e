import type { HarnessConfig, ModelPricing } from '../../config.js'
import { IllegalStateError, SessionNotFoundError } from '../../errors.js'
import type { ProjectPaths } from '../../project.js'
import {
  buildAgentInvocation,
  type ResolvedProvider,
  resolveProvider,
  usesAgentDir,
} from '../../providers/args.js'
import type { SessionBackend } from '../backends/backend.js'
import { backendOf, refuseUnsupported } from '../backends/index.js'
import {
  assertBudgetable,
  budgetLeft,
  pricingFor,
  type RunBudget,
  resumeBudget,
  spentUsd,
} from '../budget.js'
import { actEnvOf, settleIfEnded } from '../control/settle.js'
import type { SessionEnv } from '../ports.js'
import { ensureProject } from '../project-index.js'
import { getSession, seen } from '../query/query.js'
import { reconcileView, type SessionView } from '../query/reconcile.js'
import { agentDirFor, ensureAgentDir } from '../record/agent-files.js'
import { transition } from '../record/lifecycle.js'
import type { RecordStore as SessionStore } from '../record/record-store.js'
import type { Run, SessionRecord } from '../record/schema.js'
import { assertSealed, type VerifiedSession } from '../record/seal.js'
import { restoreSessionCheckpoint } from '../work/checkpoints.js'
import {
  announce,
  assertAllowedAsUser,
  launch,
  type RunOutcome,
  runRequest,
  showPromptToPaste,
} from './launch.js'
import { agentWhere, startMode } from './prepare.js'
import { agentMode, hostedInTmux, invocationMode, tmuxPlace } from './run-mode.js'
import { runPlan } from './run-plan.js'
import type { RunPlan } from './runner.js'
import { ensureWorktree } from './workspace.js'

export interface ResumeOptions {
  detach: boolean
  /** Into a new tmux session; undefined: where its last run was hosted (docs/tmux.md). */
  tmux?: boolean
  /** --session-id: the id is exact, never a prefix. */
  exact?: boolean
  /** Restore this checkpoint first (`resume --checkpoint`, `run --restore-checkpoint`). */
  checkpoint?: string
  /** A new budget for the session, in USD, all runs together: more than it has spent (docs/budgets.md). */
  budget?: number
  /** `--timeout`: the most this run may take, in ms (a resume has none unless given). */
  timeoutMs?: number
}

/** `harness session resume`: runs the provider's resume form in the session's worktree. */
export async function resumeSession(
  ctx: SessionEnv,
  input: string,
  promptWords: string[],
  options: ResumeOptions,
): Promise<RunOutcome> {
  const paths = await ctx.project()
  const store = await ctx.store()
  const session = await resumable(ctx, store, input, options.exact)
  const id = session.id
  const verified = assertSealed(session)
  transition(session.status, 'resume', id)
  const config = await ctx.config()
  const backend = await backendOf(session)
  refuseUnsupported(backend, { tmux: options.tmux === true, budget: options.budget !== undefined })
  const resume = await planResume(ctx, paths, session, promptWords, options, config, backend)
  const { provider, mode, place, budget, invocation } = resume
  await backend.check({
    ...agentWhere(ctx, provider.name, invocation.command),
    config,
    flags: {},
    repoDir: session.is_worktree ? (session.base_dir ?? paths.root) : null,
    session,
  })
  await ensureWorktree(ctx, verified, paths.sessionsDir)
  // The last run's work back first (a collection that failed): refused (exit 4) while it still cannot be.
  await backend.resume(verified, await actEnvOf(ctx))
  if (options.checkpoint !== undefined) await restoreFirst(ctx, store, verified, options.checkpoint, paths)
  await ensureProject(ctx.env, paths)
  if (usesAgentDir(provider)) ensureAgentDir(paths.harnessDir, id, false)
  const runN = (session.runs?.length ?? 0) + 1
  const plan = runPlan(ctx, {
    paths,
    session,
    runN,
    kind: 'resume',
    invocation,
    mode,
    provider,
    config,
    tmux: place,
    budget,
    pricing: resume.pricing,
    timeoutMs: options.timeoutMs,
    backend: { name: backend.name, intervalCheckpoints: backend.supports.intervalCheckpoints },
  })
  const request = runRequest(plan, session, paths, config)
  const prepared = await backend.prepare(request)
  showPromptToPaste(ctx, provider, mode, resume.prompt)
  const begin = (run: Run, fields: Partial<SessionRecord>) =>
    store.update(id, (current) =>
      resumedRecord(current, { id, run, runN, budget, fields: { ...prepared.record, ...fields }, place }),
    )
  let begun = false
  try {
    return await launch(ctx, { backend, request, prepared, plan }, async (run, fields) => {
      const record = await begin(run, fields)
      begun = true
      announce(ctx, record, mode)
      return record
    })
  } finally {
    if (!begun) await prepared.undo().catch(() => {})
  }
}

/** The session `input` names, unless it is still running (a stale one is named as such, with what to do). */
async function resumable(
  ctx: SessionEnv,
  store: SessionStore,
  input: string,
  exact: boolean | undefined,
): Promise<SessionView> {
  const view = exact ? await getExact(ctx, store, input) : await getSession(ctx, input)
  // A run that ended with nobody to record it is settled first: resume acts on the session.
  const session = view.unsettled ? await settleIfEnded(ctx, store.get(view.id) ?? view) : view
  const id = session.id
  if (session.status === 'RUNNING') {
    throw new IllegalStateError(
      `session "${id}" is still running${session.liveness && session.liveness !== 'running' ? ` (${session.liveness})` : ''}`,
      session.liveness === 'unverified'
        ? `if it is really gone, run "harness session recover ${id}"`
        : `stop it first: "harness session kill ${id}"`,
      'SESSION_RUNNING',
    )
  }
  return session
}

/** What a resume decides before it touches anything: where and how the agent runs, with what budget. */
interface ResumePlan {
  provider: ResolvedProvider
  mode: RunPlan['mode']
  place: { socket: string; session: string } | null
  prompt: string | undefined
  budget: RunBudget | null
  pricing: ModelPricing | null
  invocation: { command: string; args: string[] }
}

async function planResume(
  ctx: SessionEnv,
  paths: ProjectPaths,
  session: SessionRecord,
  promptWords: string[],
  options: ResumeOptions,
  config: HarnessConfig,
  backend: SessionBackend,
): Promise<ResumePlan> {
  const id = session.id
  const provider = resolveProvider(session.provider, config)
  const tmux = hostedInTmux(ctx, options, config, session) && backend.supports.tmux
  const mode = startMode(backend, tmux ? 'interactive' : agentMode(ctx, options.detach))
  const place = tmux ? await tmuxPlace(ctx, session.id) : null
  const prompt = promptWords.join(' ').trim() || undefined
  const extraArgs = session.extra_args ?? []
  const permission = session.permission ?? undefined
  if (permission) assertAllowedAsUser(provider, permission, ctx.env)
  const model = session.model ?? undefined
  let pricing = pricingFor(config, model)
  const budget = resumeBudget(id, session.budget_usd, options.budget, spentUsd(session.runs, pricing))
  if (budget) {
    pricing = assertBudgetable({ budgetUsd: budget.limit_usd, provider, model, mode, config }) ?? pricing
  }
  const invocation = buildAgentInvocation({
    provider,
    mode: invocationMode(mode),
    kind: 'resume',
    prompt,
    model: session.model ?? undefined,
    permission,
    agentSessionId: session.agent_session_id ?? undefined,
    extraArgs,
    agentDir: agentDirFor(paths.harnessDir, id),
    budgetLeftUsd: budget ? budgetLeft(budget.limit_usd, budget.spent_usd) : undefined,
  })
  return { provider, mode, place, prompt, budget, pricing, invocation }
}

/** `resume --checkpoint`: the checkpoint is restored before the agent starts, with how to undo it. */
async function restoreFirst(
  ctx: SessionEnv,
  store: SessionStore,
  verified: VerifiedSession<SessionRecord>,
  checkpoint: string,
  paths: ProjectPaths,
): Promise<void> {
  const id = verified.id
  const restored = await restoreSessionCheckpoint(store, verified, checkpoint, {
    env: ctx.env,
    projectRoot: paths.root,
    now: new Date(ctx.clock.now()),
  })
  ctx.notice(
    `harness: restored checkpoint ${restored.restored.n} of session ${id}${restored.before ? ` (undo: harness session restore ${id} ${restored.before.n})` : ''}`,
  )
}

/** The record with the new run on it: refused if another command resumed the session meanwhile. */
function resumedRecord(
  current: SessionRecord,
  resume: {
    id: string
    run: Run
    runN: number
    budget: RunBudget | null
    fields: Partial<SessionRecord>
    place: { socket: string; session: string } | null
  },
): SessionRecord {
  const { id, run, budget, place } = resume
  assertSealed(current)
  if ((current.runs?.length ?? 0) + 1 !== resume.runN || current.status === 'RUNNING') {
    throw new IllegalStateError(
      `session "${id}" was resumed by another command meanwhile`,
      undefined,
      'SESSION_RUNNING',
    )
  }
  return {
    ...current,
    status: transition(current.status, 'resume', id),
    pid: null,
    exit_code: null,
    completed_at: null,
    stop_reason: null,
    stop_request: null,
    ...(budget ? { budget_usd: budget.limit_usd } : {}),
    runs: [...(current.runs ?? []), run],
    ...resume.fields,
    ...(place || current.tmux_session != null
      ? { tmux_session: place?.session ?? null, tmux_socket: place?.socket ?? null, state: null }
      : {}),
  }
}

async function getExact(ctx: SessionEnv, store: SessionStore, id: string) {
  const record = store.get(id)
  if (!record) throw new SessionNotFoundError(id)
  return record.status === 'RUNNING' ? reconcileView(store, record, false, ...seen(ctx)) : record
}
