import { IllegalStateError, UsageError } from '../../errors.js'
import { ensureProjectDirs } from '../../project.js'
import type { Permission } from '../../providers/schema.js'
import type { SessionEnv } from '../ports.js'
import type { SessionView } from '../query/reconcile.js'
import type { SessionRecord } from '../record/schema.js'
import {
  assertSealedChain,
  assertValidChainName,
  type ChainRunner,
  type ChainStep,
  type ChainStore,
} from './store.js'

import {
  type ChainView,
  chainStatus,
  getChain,
  openChains,
  ownsRunner,
  runnerLiveness,
  statesOf,
  stepSessions,
  viewOf,
} from './view.js'

// The chain services, one part a module in this folder; commands reach them here.
export {
  type ChainOutcome,
  type ChainRunOutcome,
  type ChainRunResult,
  runChain,
  runChainDetached,
} from './run-chain.js'
export {
  type ChainStepView,
  type ChainView,
  chainStatus,
  listChains,
  openChains,
  type RunnerLiveness,
  runnerLiveness,
} from './view.js'

import { DEFAULT_AGENT } from '../../config.js'
import { resolveProvider } from '../../providers/args.js'
import { stopSession } from '../control/stop.js'
import { getSession } from '../query/query.js'
import { assertSealed } from '../record/seal.js'

/** A session a chain may take as a step: one harness sealed, and in no other step of this chain. */
async function adoptableSession(ctx: SessionEnv, input: string, taken: Set<string>): Promise<SessionView> {
  const session = await getSession(ctx, input)
  assertSealed(session)
  if (taken.has(session.id)) throw new UsageError(`session "${session.id}" is already a step of this chain`)
  taken.add(session.id)
  return session
}

function adoptedStep(ctx: SessionEnv, n: number, session: SessionRecord): ChainStep {
  return {
    n,
    agent: session.provider,
    model: session.model ?? null,
    permission: session.permission ?? null,
    prompt: session.prompt ?? null,
    session_id: session.id,
    adopted: true,
    added_at: nowIso(ctx),
  }
}

/** `chain create <name> [--sessions a,b,c]`. */
export async function createChain(ctx: SessionEnv, name: string, sessions: string[]): Promise<ChainView> {
  assertValidChainName(name)
  const taken = new Set<string>()
  const steps: ChainStep[] = []
  for (const input of sessions)
    steps.push(adoptedStep(ctx, steps.length + 1, await adoptableSession(ctx, input, taken)))
  ensureProjectDirs(await ctx.project())
  const chains = await openChains(ctx)
  const created = await chains.create({ name, created_at: nowIso(ctx), steps, runner: null })
  return viewOf(ctx, created)
}

export interface AddStepOptions {
  agent?: string
  model?: string
  permission?: Permission
  prompt: string[]
  extraArgs: string[]
  /** Adopt this existing session as the step. */
  session?: string
}

/** `chain add <name> [-a] [-m] [-P] "<prompt>"` or `--session <id>`. */
export async function addChainStep(
  ctx: SessionEnv,
  name: string,
  options: AddStepOptions,
): Promise<ChainView> {
  const chains = await openChains(ctx)
  const chain = await getChain(chains, name)
  assertSealedChain(chain)
  const taken = new Set(chain.steps.map((step) => step.session_id).filter((id): id is string => !!id))
  const prompt = options.prompt.join(' ').trim()
  let step: ChainStep
  if (options.session !== undefined) {
    const given = [
      options.agent !== undefined && '--agent',
      options.model !== undefined && '--model',
      options.permission !== undefined && '--permission',
      prompt && 'a prompt',
      options.extraArgs.length > 0 && 'arguments after --',
    ].filter(Boolean)
    if (given.length) {
      throw new UsageError(`--session adopts a session as it is: ${given.join(', ')} cannot be given with it`)
    }
    step = adoptedStep(ctx, 0, await adoptableSession(ctx, options.session, taken))
  } else {
    const config = await ctx.config()
    const provider = resolveProvider(options.agent ?? config.defaults?.agent ?? DEFAULT_AGENT, config)
    if (!prompt && provider.prompt.headless.length > 0) {
      throw new UsageError(
        `a chain step runs headless, and agent "${provider.name}" needs a prompt`,
        `harness chain add ${name} -a ${provider.name} "what this step should do"`,
        'MISSING_PROMPT',
      )
    }
    step = {
      n: 0,
      agent: provider.name,
      model: options.model ?? null,
      permission: options.permission ?? null,
      prompt: prompt || null,
      extra_args: options.extraArgs,
      session_id: null,
      adopted: false,
      added_at: nowIso(ctx),
    }
  }
  const updated = await chains.update(name, (current) => {
    assertSealedChain(current)
    if (step.session_id && current.steps.some((s) => s.session_id === step.session_id)) {
      throw new UsageError(`session "${step.session_id}" is already a step of this chain`)
    }
    return { ...current, steps: [...current.steps, { ...step, n: current.steps.length + 1 }] }
  })
  return viewOf(ctx, updated)
}

export interface ChainKillResult {
  name: string
  runner_pid: number
  /** The step session that was killed, if one was running. */
  killed_session: string | null
  chain: ChainView
}

/**
 * `chain kill <name>`: commits a stop request (the runner starts no further step), kills the running step
 * through its supervisor (the runner), then stops the identity-checked runner and whatever it still runs.
 */
export async function killChain(ctx: SessionEnv, name: string, graceMs: number): Promise<ChainKillResult> {
  const chains = await openChains(ctx)
  const chain = await getChain(chains, name)
  assertSealedChain(chain)
  const liveness = runnerLiveness(chain, ctx.processes)
  const runner = chain.runner
  if (!runner || liveness === 'stale') {
    if (runner) await releaseRunner(chains, name, runner, 'its runner had gone away')
    // A runner killed outright (SIGKILL) can leave its step's agent running, orphaned: that one is stopped.
    const orphan = statesOf(chain, await stepSessions(ctx, chain)).find((s) => s.status === 'RUNNING')
    if (runner && orphan?.session) {
      const result = await stopSession(ctx, orphan.session.id, 'kill', graceMs)
      return {
        name,
        runner_pid: runner.pid,
        killed_session: result.produced ? orphan.session.id : null,
        chain: await chainStatus(ctx, name),
      }
    }
    throw new IllegalStateError(`chain "${name}" is not running`, undefined, 'CHAIN_NOT_RUNNING')
  }
  if (liveness === 'unverified') {
    // Like an unverified session: never signalled; the user's word releases it.
    await releaseRunner(chains, name, runner, 'released by "harness chain kill" (runner unverifiable)')
    throw new IllegalStateError(
      `chain "${name}": its runner (pid ${runner.pid}) cannot be verified, so it was not signalled; the chain is released`,
      undefined,
      'CHAIN_UNVERIFIED',
    )
  }
  const self = ctx.processes.selfPid
  if (runner.pid === self) throw new IllegalStateError('a chain cannot kill its own runner')
  await chains.update(name, (current) =>
    ownsRunner(current, { pid: runner.pid, start_time: runner.start_time ?? null })
      ? { ...current, stop_request: { at: nowIso(ctx), by_pid: self } }
      : undefined,
  )
  let killed: string | null = null
  const running = statesOf(chain, await stepSessions(ctx, chain)).find((s) => s.status === 'RUNNING')
  if (running?.session) {
    try {
      const result = await stopSession(ctx, running.session.id, 'kill', graceMs)
      if (result.produced) killed = running.session.id
    } catch (error) {
      // It ended by itself meanwhile: nothing of it is left to stop.
      if (!(error instanceof IllegalStateError)) throw error
    }
  }
  await ctx.processes.stopTree({ ...runner, start_time: runner.start_time ?? null }, { graceMs })
  await releaseRunner(chains, name, runner, 'killed by "harness chain kill"')
  return { name, runner_pid: runner.pid, killed_session: killed, chain: await chainStatus(ctx, name) }
}

/** The port's clock, as records write times. */
function nowIso(ctx: SessionEnv): string {
  return new Date(ctx.clock.now()).toISOString()
}

async function releaseRunner(chains: ChainStore, name: string, runner: ChainRunner, outcome: string) {
  await chains.update(name, (current) =>
    ownsRunner(current, { pid: runner.pid, start_time: runner.start_time ?? null })
      ? { ...current, runner: null, stop_request: null, last_outcome: outcome }
      : undefined,
  )
}
