import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { arch, platform, release } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import {
  checkpointIntervalMs,
  DEFAULT_AGENT,
  DEFAULT_PERMISSION,
  type HarnessConfig,
  type ModelPricing,
  worktreeRoot,
  worktreeSetupCommand,
} from '../../config.js'
import {
  ExitRequest,
  errorMessage,
  HarnessError,
  IllegalStateError,
  SessionNotFoundError,
  UsageError,
} from '../../errors.js'
import { hostFacts } from '../../process/identity.js'
import { ensureProjectDirs, type ProjectPaths } from '../../project.js'
import {
  type AgentMode,
  buildAgentInvocation,
  newAgentSessionId,
  type ResolvedProvider,
  refusalAsRoot,
  resolveProvider,
  takesPrompt,
  usesAgentDir,
} from '../../providers/args.js'
import type { Permission } from '../../providers/schema.js'
import {
  assertBudgetable,
  budgetLeft,
  costSourceOf,
  pricingFor,
  type RunBudget,
  resumeBudget,
  spentUsd,
} from '../budget.js'
import type { SessionEnv, RecordStore as SessionStore } from '../ports.js'
import { getSession } from '../query/query.js'
import { agentDirFor, ensureAgentDir, removeAgentDir } from '../record/agent-files.js'
import { assertValidSessionId, generateSessionId } from '../record/ids.js'
import { transition } from '../record/lifecycle.js'
import { computeLiveness } from '../record/liveness.js'
import { signalExitCode } from '../record/outcome.js'
import type { Run, SessionRecord } from '../record/schema.js'
import { assertSealed } from '../record/seal.js'
import { maybeStartAutoCleanup } from '../removal/auto-cleanup.js'
import { type BackendOptions, checkBackend, chosenBackend, containerChoice, placeRun } from './place.js'
import {
  newSessionRecord,
  planWorkspace,
  resumeRefusal,
  type WorkspaceFacts,
  type WorkspacePlan,
} from './plan.js'
import { foregroundExit, type RunPlan, runInBackground, runInForeground } from './runner.js'

declare const HARNESS_VERSION: string

export interface StartOptions {
  agent?: string
  model?: string
  permission?: Permission
  worktree: boolean
  base?: string
  branch?: string
  sessionId?: string
  detach: boolean
  /** Host the interactive agent in a tmux session (docs/tmux.md); undefined: as config `interactive.host` says. */
  tmux?: boolean
  prompt: string[]
  extraArgs: string[]
  /** The prompt piped on stdin, read only when no prompt was given and the agent takes one. */
  promptFromStdin?: () => Promise<string>
  /** With --session-id of an existing session: restore this checkpoint before resuming. */
  restoreCheckpoint?: string
  /** Sessions whose context block goes before the prompt (docs/continuity.md). */
  contextFrom?: string[]
  /** The most the session may cost, in USD, all runs together (docs/budgets.md). */
  budget?: number
  /** Where it runs (docs/backends.md): --backend, --image, --engine; config fills the rest. */
  backend?: BackendOptions['backend']
  image?: string
  engine?: BackendOptions['engine']
}

export interface RunOutcome {
  record: SessionRecord
  /** Foreground runs: how harness must exit (the agent's code, or its signal re-raised). */
  exit?: ExitRequest
}

/**
 * Whether this run is hosted in tmux: `--tmux`, or config `interactive.host: "tmux"` for a run that would
 * be interactive, or (resume) a session whose last run was hosted in tmux — never with --detach.
 */
function hostedInTmux(
  ctx: SessionEnv,
  options: { detach: boolean; tmux?: boolean },
  config: HarnessConfig,
  previous?: SessionRecord,
): boolean {
  if (options.tmux && options.detach) {
    throw new UsageError('--tmux and --detach are two different hosts: choose one')
  }
  if (options.tmux !== undefined) return options.tmux
  if (options.detach) return false
  if (previous) return typeof previous.tmux_session === 'string'
  return config.interactive?.host === 'tmux' && agentMode(ctx, false) === 'interactive'
}

/** The tmux server and session of a run hosted in tmux; tmux missing is exit 5, before anything is made. */
async function tmuxPlace(ctx: SessionEnv, id: string): Promise<{ socket: string; session: string }> {
  const { assertTmux, tmuxSessionName, tmuxSocket } = await import('../../process/tmux.js')
  assertTmux(ctx.env)
  return { socket: tmuxSocket(ctx.env), session: tmuxSessionName(id) }
}

function agentMode(ctx: SessionEnv, detach: boolean): RunPlan['mode'] {
  if (detach) return 'background'
  return ctx.interactive ? 'interactive' : 'headless'
}

interface SignalGuard {
  signal: AbortSignal
  received: () => NodeJS.Signals | null
  dispose: () => void
}

/** harness ends by the signal it received, as if it had not caught it (130 for SIGINT, 143 for SIGTERM). */
function signalExit(signal: NodeJS.Signals): ExitRequest {
  return new ExitRequest(signalExitCode(signal) ?? 130, signal)
}

function throwIfSignalled(guard: SignalGuard): void {
  const received = guard.received()
  if (received) throw signalExit(received)
}

/** Ctrl-C (or Ctrl-\, SIGTERM, SIGHUP) before the agent starts: abort the set-up and undo it. */
function abortOnSignals(): SignalGuard {
  const controller = new AbortController()
  let received: NodeJS.Signals | null = null
  let disposed = false
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const).map((sig) => {
    const handler = () => {
      received ??= sig
      controller.abort()
    }
    process.on(sig, handler)
    return [sig, handler] as const
  })
  return {
    signal: controller.signal,
    received: () => received,
    dispose: () => {
      if (disposed) return
      disposed = true
      for (const [sig, handler] of handlers) process.removeListener(sig, handler)
    },
  }
}

/** The worktree's counterpart of the directory the user ran harness from, if it exists there. */
function startDir(worktreeDir: string, subdir: string | null | undefined): string {
  if (!subdir) return worktreeDir
  let dir = join(worktreeDir, subdir)
  while (dir.length > worktreeDir.length) {
    if (isDir(dir)) return dir
    dir = resolve(dir, '..')
  }
  return worktreeDir
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

function sessionMetadata(): Record<string, string | null> {
  const host = hostFacts()
  return {
    os: `${platform()} ${release()} ${arch()}`,
    hostname: host.hostname,
    boot_id: host.boot_id,
    pid_namespace: host.pid_namespace,
    harness_version: typeof HARNESS_VERSION === 'string' ? HARNESS_VERSION : '0.0.0-dev',
    node_version: process.version,
  }
}

/** What `run --dry-run` prints: what would run, where, with what; nothing of it exists. */
export interface RunDryRun {
  dry_run: true
  /** The id the session would get (a generated one is not reserved). */
  id: string
  agent: string
  permission: Permission
  model: string | null
  mode: RunPlan['mode']
  tmux: boolean
  command: string
  args: string[]
  /** Where the agent would start. */
  cwd: string
  /** The prompt the agent would get, the context block included. */
  prompt: string | null
  /** `--budget` in USD, or null. */
  budget_usd: number | null
  context_from: string[]
  /** The worktree that would be made, null when the run would use the current directory. */
  worktree: string | null
  branch: string | null
  base_commit: string | null
  config: {
    checkpoint_interval_ms: number
    context_max_bytes: number
    /** `worktree.setup` as it would run (argv) in the new worktree. */
    worktree_setup: string[] | null
  }
}

/** Flags that are wrong on their own, before anything is read (a run and its dry run alike). */
function checkStartOptions(options: StartOptions): void {
  if (options.sessionId !== undefined) assertValidSessionId(options.sessionId)
  if (!options.worktree && (options.base || options.branch)) {
    throw new UsageError('--base and --branch need a worktree', 'drop --no-worktree')
  }
}

/**
 * `harness run --dry-run`: decides everything a run would (agent, argv, prompt with its context block,
 * worktree, branch, base) and makes nothing: no record, no worktree, no branch, no .harness folder.
 */
export async function dryRunSession(ctx: SessionEnv, options: StartOptions): Promise<RunDryRun> {
  checkStartOptions(options)
  const paths = await ctx.project()
  const store = await ctx.store()
  if (options.sessionId && store.exists(options.sessionId)) {
    throw new UsageError(
      `session "${options.sessionId}" exists: --dry-run only shows new sessions`,
      'choose a new --session-id',
    )
  }
  if (options.restoreCheckpoint !== undefined) {
    throw new UsageError('--restore-checkpoint needs --session-id of an existing session')
  }
  const prepared = await prepareStart(ctx, paths, store, options)
  const { config, id } = prepared
  const { inspectRepo } = await import('../../git/repo.js')
  const repo = await inspectRepo(ctx.cwd, { env: ctx.env })
  const workspace = planWorkspace(options, repo, ctx.cwd, id, worktreeRoot(config, paths.root))
  let worktree: string | null = null
  let branch: string | null = null
  let baseCommit = workspace.baseCommit
  let cwd = resolve(ctx.cwd)
  if (workspace.kind === 'worktree') {
    const { resolveCommit } = await import('../../git/worktree.js')
    baseCommit ??= await resolveCommit(workspace.repoDir, workspace.base, { env: ctx.env })
    worktree = workspace.dir
    branch = workspace.branch
    cwd = join(worktree, workspace.subdir ?? '')
  }
  const { contextMaxBytes } = await import('./context.js')
  return {
    dry_run: true,
    id,
    agent: prepared.provider.name,
    permission: prepared.permission,
    model: prepared.model ?? null,
    mode: prepared.mode,
    tmux: prepared.tmux,
    command: prepared.invocation.command,
    args: prepared.invocation.args,
    cwd,
    prompt: prepared.agentPrompt ?? null,
    budget_usd: prepared.budget?.limit_usd ?? null,
    context_from: prepared.contextFrom,
    worktree,
    branch,
    base_commit: baseCommit,
    config: {
      checkpoint_interval_ms: checkpointIntervalMs(config),
      context_max_bytes: contextMaxBytes(config),
      worktree_setup: setupArgv(worktreeSetupCommand(config)),
    },
  }
}

function setupArgv(setup: { command: string; args: string[] } | null): string[] | null {
  return setup ? [setup.command, ...setup.args] : null
}

/** `harness run`: a new session (or, with --session-id of an existing one, its resume). */
export async function startSession(ctx: SessionEnv, options: StartOptions): Promise<RunOutcome> {
  checkStartOptions(options)
  const paths = await ctx.project()
  const store = await ctx.store()
  if (options.sessionId && store.exists(options.sessionId)) {
    const refusal = resumeRefusal(options.sessionId, options)
    if (refusal) throw refusal
    const existing = store.get(options.sessionId)
    const { taskDiffers } = await import('../record/task.js')
    if (existing && taskDiffers(existing.task_hash, options.prompt.join(' ').trim())) {
      ctx.warn(`the task differs from session ${existing.id}'s: it is sent to the agent as the next message`)
    }
    return resumeSession(ctx, options.sessionId, options.prompt, {
      detach: options.detach,
      exact: true,
      checkpoint: options.restoreCheckpoint,
      budget: options.budget,
    })
  }
  if (options.restoreCheckpoint !== undefined) {
    throw new UsageError(
      '--restore-checkpoint needs --session-id of an existing session',
      'see "harness session checkpoints <id>"',
    )
  }
  const prepared = await prepareStart(ctx, paths, store, options)
  const { config, provider, permission, model, tmux, mode, prompt, agentSessionId, id, invocation } = prepared

  // Checked before anything is made: without tmux, --tmux is exit 5 and nothing is left behind.
  if (tmux) await tmuxPlace(ctx, 'check')
  // So is the container engine and image (exit 5 naming the engine, exit 2 without an image).
  await checkBackend(chosenBackend(options, config), containerChoice(options, config), ctx.env)
  ensureProjectDirs(paths)
  // From here until the run is committed, a stop signal undoes the set-up instead of killing harness midway
  // (which would leave a worktree and branch that no record owns).
  const guard = abortOnSignals()
  let workspace: Workspace | undefined
  let committed = false
  let madeAgentDir = false
  let undoPlacement: (() => Promise<void>) | undefined
  try {
    workspace = await prepareWorkspace(ctx, paths, config, id, options, guard)
    if (usesAgentDir(provider)) {
      ensureAgentDir(paths.harnessDir, id, true)
      madeAgentDir = true
    }
    const place = tmux ? await tmuxPlace(ctx, id) : null
    const record = newSessionRecord({
      id,
      provider: provider.name,
      permission,
      workspace,
      prompt,
      model,
      extraArgs: options.extraArgs,
      agentSessionId,
      contextFrom: prepared.contextFrom,
      tmux: place,
      metadata: sessionMetadata(),
      now: new Date(),
    })
    if (prepared.budget) record.budget_usd = prepared.budget.limit_usd
    const planned = runPlan(ctx, paths, record, 1, 'start', invocation, mode, provider, config, place, {
      budget: prepared.budget,
      pricing: prepared.pricing,
    })
    const placement = await placeRun(
      chosenBackend(options, config),
      containerChoice(options, config),
      paths,
      planned,
      record,
    )
    undoPlacement = placement.undo
    const plan = placement.plan
    showPromptToPaste(ctx, provider, mode, prepared.agentPrompt)
    const begin = async (run: Run) => {
      throwIfSignalled(guard)
      const created = await store.create({ ...record, ...placement.record, runs: [run] })
      committed = true
      // The run is on record: from now on the supervisor's own handlers decide what a signal means.
      guard.dispose()
      announce(ctx, created, mode)
      await maybeStartAutoCleanup(ctx, paths, config)
      return created
    }
    return await launch(ctx, plan, begin)
  } catch (error) {
    const received = guard.received()
    throw received && !committed && !(error instanceof ExitRequest) ? signalExit(received) : error
  } finally {
    guard.dispose()
    if (!committed) {
      await undoPlacement?.().catch(() => {})
      await workspace?.undo()
      if (madeAgentDir || chosenBackend(options, await ctx.config()) === 'container') {
        removeAgentDir(paths.harnessDir, id)
      }
    }
  }
}

interface PreparedStart {
  config: HarnessConfig
  provider: ResolvedProvider
  permission: Permission
  model: string | undefined
  tmux: boolean
  mode: RunPlan['mode']
  /** The user's prompt (recorded, hashed). */
  prompt: string | undefined
  /** What the agent gets: the prompt, after the context block of `--context-from`. */
  agentPrompt: string | undefined
  /** Sessions whose context block goes before the prompt (`--context-from`), resolved and deduplicated. */
  contextFrom: string[]
  agentSessionId: string | undefined
  id: string
  invocation: { command: string; args: string[] }
  /** `--budget`: nothing spent yet. */
  budget: RunBudget | null
  /** config `pricing.<model>` for an agent that reports tokens but no cost. */
  pricing: ModelPricing | null
}

/** Everything a new run decides before it makes anything: shared by `run` and `run --dry-run`. */
async function prepareStart(
  ctx: SessionEnv,
  paths: ProjectPaths,
  store: SessionStore,
  options: StartOptions,
): Promise<PreparedStart> {
  const config = await ctx.config()
  const provider = resolveProvider(options.agent ?? config.defaults?.agent ?? DEFAULT_AGENT, config)
  const permission = options.permission ?? config.defaults?.permission ?? DEFAULT_PERMISSION
  // A configured default model applies only to agents that have a model flag; an explicit -m always does.
  const model = options.model ?? (provider.model_args ? config.defaults?.model : undefined)
  const tmux = hostedInTmux(ctx, options, config)
  const mode = tmux ? 'interactive' : agentMode(ctx, options.detach)
  const prompt = await startPrompt(options, provider, mode)
  let agentPrompt = prompt
  let contextFrom: string[] = []
  if (options.contextFrom?.length) {
    const context = await import('./context.js')
    const sources = await context.gatherContext(ctx, options.contextFrom)
    contextFrom = sources.map((source) => source.id)
    const block = context.buildContextBlock(sources, context.contextMaxBytes(config))
    agentPrompt = context.promptWithContext(block, prompt)
  }
  const agentSessionId = newAgentSessionId(provider)
  assertAllowedAsUser(provider, permission, ctx.env)
  const budget: RunBudget | null =
    options.budget === undefined ? null : { limit_usd: options.budget, spent_usd: 0 }
  const pricing = budget
    ? assertBudgetable({ budgetUsd: budget.limit_usd, provider, model, mode, config })
    : null
  const id = options.sessionId ?? (await unusedId(store))
  const invocation = buildAgentInvocation({
    provider,
    mode: invocationMode(mode),
    kind: 'start',
    prompt: agentPrompt,
    model,
    permission,
    agentSessionId,
    extraArgs: options.extraArgs,
    agentDir: agentDirFor(paths.harnessDir, id),
    budgetLeftUsd: budget?.limit_usd,
  })
  // In a container the agent's CLI is the image's, not this machine's.
  if (chosenBackend(options, config) === 'local') {
    const { assertExecutable } = await import('../../process/supervisor.js')
    await assertExecutable(invocation.command, ctx.env, ctx.cwd, `agent "${provider.name}"`)
  }
  return {
    config,
    provider,
    permission,
    model,
    tmux,
    mode,
    prompt,
    agentPrompt,
    contextFrom,
    agentSessionId,
    id,
    invocation,
    budget,
    pricing: pricing ?? pricingFor(config, model),
  }
}

/**
 * The prompt of a new session: its words, else what was piped on stdin. An agent that takes a prompt and runs
 * without a terminal would start with nothing to do, so that is a usage error.
 */
async function startPrompt(
  options: StartOptions,
  provider: ResolvedProvider,
  mode: RunPlan['mode'],
): Promise<string | undefined> {
  const given = options.prompt.join(' ').trim()
  if (given) return given
  const takesPrompt = provider.prompt.headless.length > 0
  if (!takesPrompt) return undefined
  const piped = ((await options.promptFromStdin?.()) ?? '').trim()
  if (piped) return piped
  if (mode === 'interactive') return undefined
  throw new UsageError(
    `agent "${provider.name}" runs without a terminal here and got no prompt`,
    `give it as words, with --prompt, or on stdin: echo "fix the tests" | harness run -a ${provider.name}`,
    'MISSING_PROMPT',
  )
}

function invocationMode(mode: RunPlan['mode']): AgentMode {
  return mode === 'interactive' ? 'interactive' : 'headless'
}

/** A level the CLI refuses for this user (claude's autonomous as root) is refused here, before anything starts. */
function assertAllowedAsUser(
  provider: ResolvedProvider,
  permission: Permission,
  env: Readonly<Record<string, string | undefined>>,
): void {
  const refusal = refusalAsRoot(provider, permission, process.getuid?.(), env)
  if (!refusal) return
  const exempt = Object.entries(provider.refused_as_root?.unless_env ?? {})
    .map(([name, value]) => `${name}=${value}`)
    .join(' or ')
  throw new UsageError(
    refusal,
    `run harness as another user or choose -P readonly or supervised${exempt ? ` (in a sandbox, ${exempt} lets it run)` : ''}`,
    'REFUSED_AS_ROOT',
  )
}

/** aider's chat takes no first message (`--message` would reply once and exit): the user pastes it. */
function showPromptToPaste(
  ctx: SessionEnv,
  provider: ResolvedProvider,
  mode: RunPlan['mode'],
  prompt: string | undefined,
): void {
  if (mode !== 'interactive' || !prompt || takesPrompt(provider, 'interactive')) return
  // Control characters would act on the terminal; they are shown as "?".
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const shown = prompt.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?')
  ctx.notice(`harness: ${provider.name} starts without your prompt; paste it into the chat:\n${shown}`)
}

/** One run of a session, for whichever supervisor runs it. */
function runPlan(
  ctx: SessionEnv,
  paths: ProjectPaths,
  session: SessionRecord,
  runN: number,
  kind: RunPlan['kind'],
  invocation: { command: string; args: string[] },
  mode: RunPlan['mode'],
  provider: ResolvedProvider,
  config: HarnessConfig,
  tmux: { socket: string; session: string } | null,
  spending: { budget: RunBudget | null; pricing: ModelPricing | null },
): RunPlan {
  const subdir = typeof session.start_subdir === 'string' ? session.start_subdir : null
  return {
    sessionsDir: paths.sessionsDir,
    logsDir: paths.logsDir,
    id: session.id,
    runN,
    kind,
    command: invocation.command,
    args: invocation.args,
    cwd: startDir(session.worktree_dir, subdir),
    env: { ...ctx.env, HARNESS_SESSION_ID: session.id, HARNESS_DIR: paths.harnessDir },
    mode,
    sessionIdCapture: provider.session_id_capture,
    headlessOutput: provider.headless_output,
    provider: provider.name,
    onStatus: config.hooks?.on_status ?? null,
    tmux,
    ...(tmux ? { supervisorEnv: ctx.env } : {}),
    changesAgainst:
      session.is_worktree && session.base_commit
        ? { dir: session.worktree_dir, base: session.base_commit }
        : null,
    checkpoints: session.base_commit ? { intervalMs: checkpointIntervalMs(config) } : null,
    budget: spending.budget,
    // Only where the agent reports tokens but no cost: a reported cost is never replaced by an estimate.
    pricing: costSourceOf(provider.headless_output) === 'tokens' ? spending.pricing : null,
  }
}

async function launch(
  ctx: SessionEnv,
  plan: RunPlan,
  begin: (run: Run) => Promise<SessionRecord>,
): Promise<RunOutcome> {
  if (plan.mode === 'background' || plan.tmux) {
    const { localHost, tmuxHost } = await import('../../process/host.js')
    const host = plan.tmux ? tmuxHost({ ...plan.tmux, cwd: plan.cwd }) : localHost
    // Like every RUNNING record shown, it carries its computed liveness.
    const record = await runInBackground(plan, begin, ctx.env, host)
    const liveness = computeLiveness(record)
    return { record: liveness ? { ...record, liveness } : record }
  }
  const result = await runInForeground(plan, begin, ctx.agentOutput)
  return { record: result.record, exit: foregroundExit(result) }
}

async function unusedId(store: SessionStore): Promise<string> {
  for (;;) {
    const id = await generateSessionId()
    if (!store.exists(id)) return id
  }
}

interface Workspace extends WorkspaceFacts {
  /** Removes what was made (worktree, branch) when the session never got its record. */
  undo: () => Promise<void>
}

/** The session's worktree (abortable with Ctrl-C), or the current directory when there is no usable repo. */
async function prepareWorkspace(
  ctx: SessionEnv,
  paths: ProjectPaths,
  config: HarnessConfig,
  id: string,
  options: StartOptions,
  abort: SignalGuard,
): Promise<Workspace> {
  const { inspectRepo } = await import('../../git/repo.js')
  const gitEnv = { env: ctx.env }
  const repo = await inspectRepo(ctx.cwd, gitEnv)
  const plan = planWorkspace(options, repo, ctx.cwd, id, worktreeRoot(config, paths.root))
  if (plan.kind === 'plain') {
    if (plan.notice) ctx.notice(plan.notice)
    return {
      dir: plan.dir,
      isWorktree: false,
      branch: null,
      baseDir: plan.dir,
      baseCommit: plan.baseCommit,
      baseRef: null,
      subdir: null,
      undo: async () => {},
    }
  }
  const { resolveCommit } = await import('../../git/worktree.js')
  const baseCommit = plan.baseCommit ?? (await resolveCommit(plan.repoDir, plan.base, gitEnv))
  // Two runs with one --session-id: only one may make the worktree (the other's rollback would remove it).
  return settingUp(paths.sessionsDir, id, () => makeWorktree(ctx, config, plan, baseCommit, abort))
}

/** Makes the planned worktree and branch at `baseCommit`, then sets it up; undone if the set-up fails. */
async function makeWorktree(
  ctx: SessionEnv,
  config: HarnessConfig,
  plan: Extract<WorkspacePlan, { kind: 'worktree' }>,
  baseCommit: string,
  abort: SignalGuard,
): Promise<Workspace> {
  const { repoDir, dir, branch } = plan
  if (existsSync(dir)) {
    throw new IllegalStateError(
      `worktree folder ${dir} already exists`,
      'remove it or choose another --session-id',
    )
  }
  try {
    const { createWorktree } = await import('../../git/worktree.js')
    // Prompts, agent output and copied secrets (.env) live there: 0700 like the rest of harness's folders.
    mkdirSync(dirname(dir), { recursive: true, mode: 0o700 })
    await createWorktree({
      repoDir,
      path: dir,
      branch,
      base: baseCommit,
      verifiedBase: true,
      signal: abort.signal,
      env: ctx.env,
    })
    chmodSync(dir, 0o700)
    const undo = () => undoWorktree(ctx, repoDir, dir, branch, baseCommit)
    try {
      throwIfSignalled(abort)
      await setUpWorktree(ctx, config, plan.topLevel, dir, abort.signal)
      throwIfSignalled(abort)
    } catch (error) {
      await undo()
      throw error
    }
    return {
      dir,
      isWorktree: true,
      branch,
      baseDir: repoDir,
      baseCommit,
      baseRef: plan.baseRef,
      subdir: plan.subdir,
      undo,
    }
  } catch (error) {
    const sig = abort.received()
    throw sig && !(error instanceof ExitRequest) ? signalExit(sig) : error
  }
}

/**
 * Removes the worktree and branch a run made when it never got its record. A failed step leaves something
 * behind: say what, and go on undoing (docs/design.md, "Runs"); the branch goes only while it still points
 * where it was made, and not from under a worktree still there: never delete work.
 */
async function undoWorktree(
  ctx: SessionEnv,
  repoDir: string,
  dir: string,
  branch: string,
  baseCommit: string,
): Promise<void> {
  const { removeWorktree, deleteBranch } = await import('../../git/worktree.js')
  const leftBehind = (what: string) => (error: unknown) =>
    ctx.warn(`could not remove ${what}: ${errorMessage(error)}`)
  const removed = await removeWorktree(repoDir, dir, { force: true, env: ctx.env }).then(
    () => true,
    (error: unknown) => {
      leftBehind(`the worktree ${dir}`)(error)
      return false
    },
  )
  if (!removed) return ctx.warn(`kept the branch ${branch} with that worktree`)
  await deleteBranch(repoDir, branch, baseCommit, { dropConfig: true, env: ctx.env }).catch(
    leftBehind(`the branch ${branch}`),
  )
}

/**
 * Runs `fn` (making or recreating the worktree of session `id`) while no other command does the same for it: a
 * loser's failed `git worktree add` would roll back, that is remove, the winner's worktree. A second command
 * is refused at once (exit 4); a lock left by a dead command is broken.
 */
async function settingUp<T>(sessionsDir: string, id: string, fn: () => Promise<T>): Promise<T> {
  const { FileLock } = await import('../record/lock.js')
  const lock = FileLock.tryAcquire(join(sessionsDir, `${id}.worktree.lock`))
  if (!lock) {
    throw new IllegalStateError(
      `the worktree of session "${id}" is being set up by another command`,
      undefined,
      'SESSION_BUSY',
    )
  }
  try {
    return await fn()
  } finally {
    lock.release()
  }
}

/** worktree.include files copied in, then worktree.setup run in the new worktree (its failure fails the run). */
async function setUpWorktree(
  ctx: SessionEnv,
  config: HarnessConfig,
  from: string,
  dir: string,
  signal: AbortSignal,
) {
  const include = config.worktree?.include ?? []
  if (include.length) {
    const { copyIncludedFiles } = await import('../../git/worktree.js')
    await copyIncludedFiles(from, dir, include, { env: ctx.env })
  }
  const setup = worktreeSetupCommand(config)
  if (!setup) return
  const { runSetupCommand } = await import('../../process/setup.js')
  ctx.notice(`harness: running worktree setup in ${dir}`)
  const { worktreeSetupSource } = await import('../../config.js')
  const file = worktreeSetupSource((await ctx.project()).configFile, ctx.env)
  await runSetupCommand(setup, dir, ctx.env, signal, (line) => ctx.notice(`setup| ${line}`), {
    file,
    streamed: ctx.quiet !== true,
  })
}

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
  const session = options.exact ? await getExact(store, input) : await getSession(ctx, input)
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
  const verified = assertSealed(session)
  transition(session.status, 'resume', id)
  const config = await ctx.config()
  const provider = resolveProvider(session.provider, config)
  const tmux = hostedInTmux(ctx, options, config, session)
  const mode = tmux ? 'interactive' : agentMode(ctx, options.detach)
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
  const backend = session.backend === 'container' ? 'container' : 'local'
  if (backend === 'local') {
    const { assertExecutable } = await import('../../process/supervisor.js')
    await assertExecutable(invocation.command, ctx.env, ctx.cwd, `agent "${provider.name}"`)
  }
  await ensureWorktree(ctx, session, paths.sessionsDir)
  if (options.checkpoint !== undefined) {
    const { restoreSessionCheckpoint } = await import('../work/checkpoints.js')
    const restored = await restoreSessionCheckpoint(store, verified, options.checkpoint, {
      env: ctx.env,
      projectRoot: paths.root,
    })
    ctx.notice(
      `harness: restored checkpoint ${restored.restored.n} of session ${id}${restored.before ? ` (undo: harness session restore ${id} ${restored.before.n})` : ''}`,
    )
  }
  ensureProjectDirs(paths)
  if (usesAgentDir(provider)) ensureAgentDir(paths.harnessDir, id, false)
  const runN = (session.runs?.length ?? 0) + 1
  const planned = runPlan(ctx, paths, session, runN, 'resume', invocation, mode, provider, config, place, {
    budget,
    pricing,
  })
  const placement = await placeRun(backend, containerChoice({}, config, session), paths, planned, session)
  const plan = placement.plan
  showPromptToPaste(ctx, provider, mode, prompt)
  const begin = (run: Run) =>
    store.update(id, (current) => {
      assertSealed(current)
      if ((current.runs?.length ?? 0) + 1 !== runN || current.status === 'RUNNING') {
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
        ...placement.record,
        ...(place || current.tmux_session != null
          ? { tmux_session: place?.session ?? null, tmux_socket: place?.socket ?? null, state: null }
          : {}),
      }
    })
  let begun = false
  try {
    return await launch(ctx, plan, async (run) => {
      const record = await begin(run)
      begun = true
      announce(ctx, record, mode)
      return record
    })
  } finally {
    if (!begun) await placement.undo().catch(() => {})
  }
}

/** A foreground run names its session before the agent takes over, for `session path`/`logs` elsewhere. */
function announce(ctx: SessionEnv, record: SessionRecord, mode: RunPlan['mode']): void {
  if (mode === 'background') return
  const branch = record.git_branch ? ` (branch ${record.git_branch})` : ' (no worktree)'
  ctx.notice(`harness: session ${record.id} in ${record.worktree_dir}${branch}`)
}

async function getExact(store: SessionStore, id: string) {
  const { reconcileView } = await import('../query/reconcile.js')
  const record = store.get(id)
  if (!record) throw new SessionNotFoundError(id)
  return record.status === 'RUNNING' ? reconcileView(store, record) : record
}

/** Resume always runs inside the session's worktree: recreated from its branch if it was removed. */
async function ensureWorktree(ctx: SessionEnv, session: SessionRecord, sessionsDir: string): Promise<void> {
  if (isDir(session.worktree_dir)) return
  if (!session.is_worktree || !session.git_branch) {
    throw new IllegalStateError(`the directory of session "${session.id}" is gone: ${session.worktree_dir}`)
  }
  const branch = session.git_branch
  await settingUp(sessionsDir, session.id, async () => {
    if (isDir(session.worktree_dir)) return
    const { recreateWorktree } = await import('../../git/worktree.js')
    const repoDir = session.base_dir ?? (await ctx.project()).root
    try {
      await recreateWorktree({ repoDir, path: session.worktree_dir, branch, env: ctx.env })
      chmodSync(session.worktree_dir, 0o700)
    } catch (error) {
      // A cleanup that removed the session meanwhile makes git fail ("invalid reference"): say what happened.
      const store = await ctx.store()
      if (!store.exists(session.id)) throw new SessionNotFoundError(session.id)
      const { branchTip } = await import('../../git/repo.js')
      const gone = await branchTip(repoDir, branch, { env: ctx.env }).then(
        (tip) => tip === null,
        () => false,
      )
      if (gone || (error instanceof HarnessError && error.code === 'BRANCH_MISSING')) {
        throw new IllegalStateError(
          `session "${session.id}" cannot be resumed: its worktree ${session.worktree_dir} and its branch "${branch}" are gone`,
          `snapshots of its work, if any, are under refs/harness/${session.id}/ ("git for-each-ref refs/harness/${session.id}/")`,
          'BRANCH_MISSING',
        )
      }
      throw error
    }
    ctx.notice(`harness: recreated worktree ${session.worktree_dir} from branch ${branch}`)
  })
}
