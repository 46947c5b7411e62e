import { arch, platform, release } from 'node:os'
import { DEFAULT_AGENT, DEFAULT_PERMISSION, type HarnessConfig, type ModelPricing } from '../../config.js'
import { UsageError } from '../../errors.js'
import { hostFacts } from '../../process/identity.js'
import type { ProjectPaths } from '../../project.js'
import {
  buildAgentInvocation,
  newAgentSessionId,
  type ResolvedProvider,
  resolveProvider,
} from '../../providers/args.js'
import type { Permission } from '../../providers/schema.js'
import type { BackendCheck, BackendName, SessionBackend } from '../backends/backend.js'
import { backendNamed, refuseUnsupported } from '../backends/index.js'
import { assertBudgetable, pricingFor, type RunBudget } from '../budget.js'
import type { SessionEnv } from '../ports.js'
import { agentDirFor } from '../record/agent-files.js'
import { assertValidSessionId, generateSessionId } from '../record/ids.js'
import { assertValidName, nameTakenError } from '../record/names.js'
import type { RecordStore as SessionStore } from '../record/record-store.js'
import * as context from './context.js'
import { assertAllowedAsUser } from './launch.js'
import { sessionIdClash } from './plan.js'
import { agentMode, hostedInTmux, invocationMode } from './run-mode.js'
import type { RunPlan } from './runner.js'

declare const HARNESS_VERSION: string

export interface StartOptions {
  agent?: string
  model?: string
  permission?: Permission
  worktree: boolean
  base?: string
  branch?: string
  sessionId?: string
  /** `run --name`: unique in the project, accepted wherever an id is. */
  name?: string
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
  /** `--timeout`: the most this run may take, in ms; then it is stopped as by pause (PAUSED `timeout`). */
  timeoutMs?: number
  /** Where it runs (docs/backends.md): --backend, --image, --engine; config fills the rest. */
  backend?: BackendName
  image?: string
  engine?: 'podman' | 'docker'
}

/** Flags that are wrong on their own, before anything is read (a run and its dry run alike). */
export function checkStartOptions(options: StartOptions): void {
  if (options.sessionId !== undefined) assertValidSessionId(options.sessionId)
  if (options.name !== undefined) assertValidName(options.name)
  if (!options.worktree && (options.base || options.branch)) {
    throw new UsageError('--base and --branch need a worktree', 'drop --no-worktree')
  }
}

export interface PreparedStart {
  config: HarnessConfig
  /** Where it runs: `--backend`, else config `backend`, else local. */
  backend: SessionBackend
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
export async function prepareStart(
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
  const { backend, tmux, mode } = await placeStart(ctx, options, config)
  const prompt = await startPrompt(options, provider, mode)
  const { agentPrompt, contextFrom } = await withContext(ctx, options, config, prompt)
  const agentSessionId = newAgentSessionId(provider)
  assertAllowedAsUser(provider, permission, ctx.env)
  const budget: RunBudget | null =
    options.budget === undefined ? null : { limit_usd: options.budget, spent_usd: 0 }
  const pricing = budget
    ? assertBudgetable({ budgetUsd: budget.limit_usd, provider, model, mode, config })
    : null
  // Before anything is made (the name is taken for good, atomically, with the record).
  if (options.sessionId !== undefined) {
    const clash = sessionIdClash(options.sessionId, store.ids(), store.idOfName(options.sessionId))
    if (clash) throw clash
  }
  if (options.name !== undefined) {
    const owner = store.idOfName(options.name) ?? (store.exists(options.name) ? options.name : null)
    if (owner !== null) throw nameTakenError(options.name, owner)
  }
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
  // The agent's CLI where it will run (here, in the image, on the nodes), the engine, the spool: exit 2 or 5.
  await backend.check({
    ...agentWhere(ctx, provider.name, invocation.command),
    config,
    flags: { image: options.image, engine: options.engine },
    repoDir: options.worktree ? paths.root : null,
  })
  return {
    config,
    backend,
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
 * Where and how a new run's agent runs: its backend (`--backend`, else config `backend`, else local), refusing
 * what that backend cannot do (exit 2), in tmux or not, and its mode.
 */
async function placeStart(ctx: SessionEnv, options: StartOptions, config: HarnessConfig) {
  const backend = await backendNamed(options.backend ?? config.backend)
  refuseUnsupported(backend, {
    tmux: options.tmux === true,
    noWorktree: !options.worktree,
    budget: options.budget !== undefined,
  })
  // config `interactive.host: "tmux"` applies where the agent can have a terminal; --tmux was checked above.
  const tmux = hostedInTmux(ctx, options, config) && backend.supports.tmux
  const mode = startMode(backend, tmux ? 'interactive' : agentMode(ctx, options.detach))
  return { backend, tmux, mode }
}

/** The prompt the agent gets: the context block of `--context-from` first (docs/continuity.md). */
async function withContext(
  ctx: SessionEnv,
  options: StartOptions,
  config: HarnessConfig,
  prompt: string | undefined,
): Promise<{ agentPrompt: string | undefined; contextFrom: string[] }> {
  if (!options.contextFrom?.length) return { agentPrompt: prompt, contextFrom: [] }
  const sources = await context.gatherContext(ctx, options.contextFrom)
  const block = context.buildContextBlock(sources, context.contextMaxBytes(config))
  return {
    agentPrompt: context.promptWithContext(block, prompt),
    contextFrom: sources.map((source) => source.id),
  }
}

/** A backend whose agent cannot have a terminal runs it headless in a terminal too (its output shown). */
export function startMode(backend: SessionBackend, mode: RunPlan['mode']): RunPlan['mode'] {
  return mode === 'interactive' && !backend.supports.interactive ? 'headless' : mode
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

async function unusedId(store: SessionStore): Promise<string> {
  for (;;) {
    const id = await generateSessionId()
    if (!store.exists(id)) return id
  }
}

/** The host facts a new record keeps (where it ran, with which harness and node). */
export function sessionMetadata(): Record<string, string | null> {
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

/** The agent a backend checks before a run or a resume: its command, how errors name it, the user's folder. */
export function agentWhere(
  ctx: Pick<SessionEnv, 'env' | 'cwd'>,
  provider: string,
  command: string,
): Pick<BackendCheck, 'command' | 'what' | 'env' | 'cwd'> {
  return { command, what: `agent "${provider}"`, env: ctx.env, cwd: ctx.cwd }
}
