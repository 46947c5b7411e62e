import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { ExitRequest, IllegalStateError, UsageError } from '../../errors.js'
import { checkIdentity, identify, type ProcessIdentity } from '../../process/identity.js'
import { ensureProjectDirs } from '../../project.js'
import type { Permission } from '../../providers/schema.js'
import type { SessionEnv } from '../ports.js'
import type { SessionView } from '../query/reconcile.js'
import { signalExitCode } from '../record/outcome.js'
import type { SessionRecord } from '../record/schema.js'
import {
  type ChainState,
  chainState,
  nextStep,
  type StepSession,
  type StepState,
  type StepStatus,
  stepStates,
  stepTime,
  waitsFor,
} from './plan.js'
import {
  assertSealedChain,
  assertValidChainName,
  type Chain,
  ChainNotFoundError,
  type ChainRunner,
  type ChainStep,
  ChainStore,
} from './store.js'

/** Computed like a session's liveness, from the runner's recorded identity; never stored. */
export type RunnerLiveness = 'running' | 'stale' | 'unverified'

export interface ChainStepView {
  n: number
  session_id: string | null
  status: StepStatus
  agent: string | null
  prompt: string | null
  /** The agent's arguments (for `-a exec`: the command). */
  extra_args: string[]
  /** When it ended, else started, else was added. */
  time: string
  /** For a PENDING step: what it waits for. */
  waits_for: string | null
}

export interface ChainView {
  name: string
  sealed: boolean
  state: ChainState
  runner: (ChainRunner & { liveness: RunnerLiveness }) | null
  /** The step `chain run` continues at (null: every step completed). */
  next: number | null
  last_outcome: string | null
  steps: ChainStepView[]
}

export async function openChains(ctx: SessionEnv): Promise<ChainStore> {
  const paths = await ctx.project()
  const { RecordSealer } = await import('../record/seal.js')
  return new ChainStore(join(paths.harnessDir, 'chains'), RecordSealer.forEnv(ctx.env), (path, reason) =>
    ctx.warn(`${path}: ${reason}`),
  )
}

async function getChain(chains: ChainStore, name: string): Promise<Chain> {
  const chain = chains.get(assertValidChainName(name))
  if (!chain) throw new ChainNotFoundError(name)
  return chain
}

export function runnerLiveness(chain: Chain): RunnerLiveness | null {
  const runner = chain.runner
  if (!runner) return null
  const check = checkIdentity(runner)
  const liveness = check === 'alive' ? 'running' : check === 'dead' ? 'stale' : 'unverified'
  // A foreign chain is never acted on (docs/security.md): only "verifiably gone" is believed of it.
  return chain.sealed !== true && liveness !== 'stale' ? 'unverified' : liveness
}

function ownsRunner(chain: Chain, self: { pid: number; start_time: string | null }): boolean {
  return chain.runner?.pid === self.pid && (chain.runner.start_time ?? null) === self.start_time
}

/** The step sessions, stale ones reconciled on the way (as every read of a session does). */
async function stepSessions(ctx: SessionEnv, chain: Chain): Promise<Map<string, SessionView | null>> {
  const store = await ctx.store()
  const { reconcileView } = await import('../query/reconcile.js')
  const found = new Map<string, SessionView | null>()
  for (const step of chain.steps) {
    const id = step.session_id
    if (!id || found.has(id)) continue
    let record: SessionRecord | null = null
    try {
      record = store.get(id)
    } catch {
      record = null // a corrupt record was reported; the step shows as if its session were not there
    }
    found.set(id, record && record.status === 'RUNNING' ? await reconcileView(store, record) : record)
  }
  return found
}

function statesOf(chain: Chain, sessions: Map<string, SessionView | null>): StepState[] {
  return stepStates(chain, (id) => (sessions.get(id) as StepSession | null | undefined) ?? null)
}

export function chainView(chain: Chain, states: StepState[], liveness: RunnerLiveness | null): ChainView {
  const alive = liveness === 'running'
  const next = nextStep(states)
  return {
    name: chain.name,
    sealed: chain.sealed === true,
    state: chainState(states, alive),
    runner: chain.runner && liveness ? { ...chain.runner, liveness } : null,
    next: next.kind === 'done' ? null : ((states[next.index] as StepState).step.n ?? null),
    last_outcome: chain.last_outcome ?? null,
    steps: states.map((state, index) => ({
      n: state.step.n,
      session_id: state.step.session_id ?? null,
      status: state.status,
      agent: state.step.agent ?? null,
      prompt: state.step.prompt ?? null,
      extra_args: state.step.extra_args ?? [],
      time: stepTime(state),
      waits_for: waitsFor(states, index, alive),
    })),
  }
}

async function viewOf(ctx: SessionEnv, chain: Chain): Promise<ChainView> {
  return chainView(chain, statesOf(chain, await stepSessions(ctx, chain)), runnerLiveness(chain))
}

/** `chain status <name>`. */
export async function chainStatus(ctx: SessionEnv, name: string): Promise<ChainView> {
  return viewOf(ctx, await getChain(await openChains(ctx), name))
}

/** `chain list`: every chain, by name. */
export async function listChains(ctx: SessionEnv): Promise<ChainView[]> {
  const views: ChainView[] = []
  for (const chain of (await openChains(ctx)).list()) views.push(await viewOf(ctx, chain))
  return views
}

/** A session a chain may take as a step: one harness sealed, and in no other step of this chain. */
async function adoptableSession(ctx: SessionEnv, input: string, taken: Set<string>): Promise<SessionView> {
  const { getSession } = await import('../query/query.js')
  const session = await getSession(ctx, input)
  const { assertSealed } = await import('../record/seal.js')
  assertSealed(session)
  if (taken.has(session.id)) throw new UsageError(`session "${session.id}" is already a step of this chain`)
  taken.add(session.id)
  return session
}

function adoptedStep(n: number, session: SessionRecord): ChainStep {
  return {
    n,
    agent: session.provider,
    model: session.model ?? null,
    permission: session.permission ?? null,
    prompt: session.prompt ?? null,
    session_id: session.id,
    adopted: true,
    added_at: new Date().toISOString(),
  }
}

/** `chain create <name> [--sessions a,b,c]`. */
export async function createChain(ctx: SessionEnv, name: string, sessions: string[]): Promise<ChainView> {
  assertValidChainName(name)
  const taken = new Set<string>()
  const steps: ChainStep[] = []
  for (const input of sessions)
    steps.push(adoptedStep(steps.length + 1, await adoptableSession(ctx, input, taken)))
  ensureProjectDirs(await ctx.project())
  const chains = await openChains(ctx)
  const created = await chains.create({ name, created_at: new Date().toISOString(), steps, runner: null })
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
    step = adoptedStep(0, await adoptableSession(ctx, options.session, taken))
  } else {
    const config = await ctx.config()
    const { DEFAULT_AGENT } = await import('../../config.js')
    const { resolveProvider } = await import('../../providers/args.js')
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
      added_at: new Date().toISOString(),
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

export type ChainOutcome =
  | 'completed'
  | 'stopped'
  | 'blocked'
  | 'killed'
  | 'interrupted'
  | 'started'
  | 'failed'

export interface ChainRunResult {
  outcome: ChainOutcome
  /** The step the run ended at (stopped, blocked, killed), if any. */
  step: number | null
  message: string
  chain: ChainView
}

export interface ChainRunOutcome {
  result: ChainRunResult
  /** How a foreground `chain run` exits: 1 unless every step completed; a signal is re-raised. */
  exit: ExitRequest
}

/**
 * `chain run <name> [--detach]`: runs the steps in order from the first one not COMPLETED. In the foreground
 * this process is the runner (and the supervisor of each step); with --detach a detached harness is, recorded
 * by identity before it gets its work, like a background run's supervisor.
 */
export async function runChain(
  ctx: SessionEnv,
  name: string,
  options: { detach: boolean },
): Promise<ChainRunOutcome> {
  const chains = await openChains(ctx)
  const chain = await getChain(chains, name)
  assertSealedChain(chain)
  if (chain.steps.length === 0) {
    throw new IllegalStateError(`chain "${name}" has no steps`, `harness chain add ${name} -a claude "…"`)
  }
  const next = nextStep(statesOf(chain, await stepSessions(ctx, chain)))
  if (next.kind === 'blocked') throw new IllegalStateError(`chain "${name}" cannot go on: ${next.reason}`)
  if (next.kind === 'done') {
    const view = await viewOf(ctx, chain)
    const message = 'every step is COMPLETED, nothing to run'
    return { result: { outcome: 'completed', step: null, message, chain: view }, exit: new ExitRequest(0) }
  }
  if (options.detach) {
    const paths = await ctx.project()
    const { startDetachedHarness } = await import('../../process/supervisor.js')
    const runner = await startDetachedHarness(
      ['--dir', paths.harnessDir, '__chain-run', name],
      ctx.env,
      ctx.cwd,
    )
    let committed = false
    try {
      await claimRunner(chains, name, runner.identity, true)
      committed = true
      runner.send({ name })
    } finally {
      if (!committed) runner.abandon()
    }
    const view = await viewOf(ctx, await getChain(chains, name))
    const message = `runs in the background (runner pid ${runner.identity.pid})`
    return { result: { outcome: 'started', step: view.next, message, chain: view }, exit: new ExitRequest(0) }
  }
  const self = identify(process.pid)
  if (!self) throw new Error('cannot read this process identity')
  await claimRunner(chains, name, self, false)
  return driveChain(ctx, chains, name, self)
}

/** The hidden `__chain-run` command: the detached runner's whole life. Its work arrives on stdin. */
export async function runChainDetached(ctx: SessionEnv, input: string): Promise<void> {
  if (!input.trim()) return // the launcher gave up before recording this runner
  const { name } = JSON.parse(input) as { name: string }
  const self = identify(process.pid)
  if (!self) return
  const chains = await openChains(ctx)
  const chain = chains.get(assertValidChainName(name))
  // Only the runner the chain names may run it.
  if (chain?.sealed !== true || !ownsRunner(chain, self)) return
  await driveChain(ctx, chains, name, self)
}

/** Records `self` as the chain's runner; refused while another runner lives (a stale one is taken over). */
async function claimRunner(
  chains: ChainStore,
  name: string,
  self: ProcessIdentity,
  detached: boolean,
): Promise<void> {
  await chains.update(name, (current) => {
    assertSealedChain(current)
    const liveness = runnerLiveness(current)
    if (current.runner && liveness !== 'stale') {
      throw new IllegalStateError(
        `chain "${name}" is already running (runner pid ${current.runner.pid}${liveness === 'unverified' ? ', unverified' : ''})`,
        liveness === 'unverified'
          ? `if it is really gone, run "harness chain kill ${name}"`
          : `see "harness chain status ${name}"; stop it with "harness chain kill ${name}"`,
        'CHAIN_RUNNING',
      )
    }
    const runner: ChainRunner = {
      pid: self.pid,
      start_time: self.start_time,
      hostname: self.hostname,
      boot_id: self.boot_id,
      pid_namespace: self.pid_namespace,
      started_at: new Date().toISOString(),
      detached,
    }
    return { ...current, runner, stop_request: null }
  })
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT']

/** Steps run headless in this process: it supervises each one (its agent's output goes where `ctx` says). */
function headless(ctx: SessionEnv): SessionEnv {
  return {
    cwd: ctx.cwd,
    env: ctx.env,
    interactive: false,
    stdinIsTerminal: false,
    agentOutput: ctx.agentOutput,
    project: () => ctx.project(),
    store: () => ctx.store(),
    chains: () => ctx.chains(),
    config: () => ctx.config(),
    clock: ctx.clock,
    processes: ctx.processes,
    notice: (message) => ctx.notice(message),
    warn: (message) => ctx.warn(message),
  }
}

interface Ending {
  outcome: ChainOutcome
  step: number | null
  message: string
  signal?: NodeJS.Signals
}

/**
 * The runner's loop: each time, the first step not COMPLETED runs (started, or resumed if it ended without
 * completing); a step that does not complete stops the chain. A stop signal, or a `chain kill` request, ends
 * it at the next step boundary (the step itself is stopped by its supervisor, this process).
 */
async function driveChain(
  ctx: SessionEnv,
  chains: ChainStore,
  name: string,
  self: ProcessIdentity,
): Promise<ChainRunOutcome> {
  let received: NodeJS.Signals | null = null
  const onSignal = (signal: NodeJS.Signals) => {
    received ??= signal
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  const stepEnv = headless(ctx)
  let ending: Ending = { outcome: 'failed', step: null, message: 'ended unexpectedly' }
  try {
    ending = await runSteps(ctx, stepEnv, chains, name, self, () => received)
  } catch (error) {
    if (error instanceof ExitRequest && error.signal) {
      ending = {
        outcome: 'interrupted',
        step: null,
        message: `interrupted by ${error.signal}`,
        signal: error.signal,
      }
    } else {
      ending = { outcome: 'failed', step: null, message: `failed: ${(error as Error).message}` }
      throw error
    }
  } finally {
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal)
    const last = ending
    await chains
      .update(name, (current) =>
        ownsRunner(current, self)
          ? { ...current, runner: null, stop_request: null, last_outcome: last.message }
          : undefined,
      )
      .catch(() => {})
  }
  const view = await viewOf(ctx, await getChain(chains, name))
  const result: ChainRunResult = {
    outcome: ending.outcome,
    step: ending.step,
    message: ending.message,
    chain: view,
  }
  const exit = ending.signal
    ? new ExitRequest(signalExitCode(ending.signal) ?? 130, ending.signal)
    : new ExitRequest(ending.outcome === 'completed' ? 0 : 1)
  return { result, exit }
}

async function runSteps(
  ctx: SessionEnv,
  stepEnv: SessionEnv,
  chains: ChainStore,
  name: string,
  self: ProcessIdentity,
  received: () => NodeJS.Signals | null,
): Promise<Ending> {
  const store = await ctx.store()
  for (;;) {
    const signal = received()
    if (signal) return { outcome: 'interrupted', step: null, message: `interrupted by ${signal}`, signal }
    const chain = await getChain(chains, name)
    if (!ownsRunner(chain, self)) {
      return { outcome: 'stopped', step: null, message: 'another runner took the chain over' }
    }
    if (chain.stop_request)
      return { outcome: 'killed', step: null, message: 'killed by "harness chain kill"' }
    const states = statesOf(chain, await stepSessions(ctx, chain))
    await markCompleted(chains, name, states)
    const next = nextStep(states)
    if (next.kind === 'done') {
      return { outcome: 'completed', step: null, message: `completed all ${states.length} steps` }
    }
    const step = (states[next.index] as StepState).step
    if (next.kind === 'blocked') return { outcome: 'blocked', step: step.n, message: next.reason }
    let id: string
    if (next.kind === 'start') {
      id = step.session_id ?? (await unusedSessionId(ctx))
      const carried = await carryForward(ctx, name, next.previous, step.n - 1)
      // Checked in the same write: a kill committed meanwhile starts nothing more.
      const claimed = await chains.update(name, (current) =>
        current.stop_request || !ownsRunner(current, self)
          ? undefined
          : {
              ...current,
              steps: current.steps.map((s) =>
                s.n === step.n
                  ? { ...s, session_id: id, ...(carried ? { carried_commit: carried } : {}) }
                  : s,
              ),
            },
      )
      if (claimed.steps.find((s) => s.n === step.n)?.session_id !== id) continue
      const { startSession } = await import('../run/start.js')
      ctx.notice(`harness: chain ${name}: step ${step.n} starts as session ${id}`)
      await startSession(stepEnv, {
        agent: step.agent ?? undefined,
        model: step.model ?? undefined,
        permission: step.permission ?? undefined,
        worktree: true,
        base: next.base ?? undefined,
        // What the step before did comes first in the prompt (docs/continuity.md, "Context from earlier sessions").
        contextFrom: next.previous ? [next.previous.id] : undefined,
        sessionId: id,
        detach: false,
        prompt: step.prompt ? [step.prompt] : [],
        extraArgs: step.extra_args ?? [],
      })
    } else {
      id = next.id
      const { resumeSession } = await import('../run/start.js')
      ctx.notice(`harness: chain ${name}: step ${step.n} resumes session ${id}`)
      await resumeSession(stepEnv, id, step.prompt ? [step.prompt] : [], { detach: false, exact: true })
    }
    const after = store.get(id)
    if (after?.status !== 'COMPLETED') {
      return {
        outcome: 'stopped',
        step: step.n,
        message: `stopped at step ${step.n}: session ${id} is ${after?.status ?? 'gone'}`,
      }
    }
  }
}

/** Steps whose session COMPLETED are marked so in the chain: removing that session later does not undo them. */
async function markCompleted(chains: ChainStore, name: string, states: StepState[]): Promise<void> {
  const done = new Map<number, string>()
  for (const { step, session } of states) {
    if (session?.status === 'COMPLETED' && !step.completed_at) {
      done.set(step.n, session.completed_at ?? new Date().toISOString())
    }
  }
  if (done.size === 0) return
  await chains.update(name, (current) => ({
    ...current,
    steps: current.steps.map((s) => (done.has(s.n) ? { ...s, completed_at: done.get(s.n) } : s)),
  }))
}

async function unusedSessionId(ctx: SessionEnv): Promise<string> {
  const store = await ctx.store()
  const { generateSessionId } = await import('../record/ids.js')
  for (;;) {
    const id = await generateSessionId()
    if (!store.exists(id)) return id
  }
}

/**
 * Work carries forward: what the previous step left uncommitted in its worktree is committed on its branch,
 * which the next step's worktree starts from (docs/continuity.md, "Chains").
 */
async function carryForward(
  ctx: SessionEnv,
  name: string,
  previous: StepSession | null,
  n: number,
): Promise<string | null> {
  if (!previous?.git_branch) return null
  const record = (await ctx.store()).get(previous.id)
  if (!record?.is_worktree || record.sealed !== true || !existsSync(record.worktree_dir)) return null
  const { commitUncommittedWork } = await import('../../git/carry.js')
  const task = (record.prompt ?? '').split('\n')[0]?.trim()
  const message = task
    ? `${task} (harness chain ${name}, step ${n})`
    : `harness chain ${name}, step ${n}: the work session ${record.id} left uncommitted`
  return commitUncommittedWork(record.worktree_dir, message, { env: ctx.env })
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
  const liveness = runnerLiveness(chain)
  const runner = chain.runner
  if (!runner || liveness === 'stale') {
    if (runner) await releaseRunner(chains, name, runner, 'its runner had gone away')
    // A runner killed outright (SIGKILL) can leave its step's agent running, orphaned: that one is stopped.
    const orphan = statesOf(chain, await stepSessions(ctx, chain)).find((s) => s.status === 'RUNNING')
    if (runner && orphan?.session) {
      const { stopSession } = await import('../control/control.js')
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
  if (runner.pid === process.pid) throw new IllegalStateError('a chain cannot kill its own runner')
  await chains.update(name, (current) =>
    ownsRunner(current, { pid: runner.pid, start_time: runner.start_time ?? null })
      ? { ...current, stop_request: { at: new Date().toISOString(), by_pid: process.pid } }
      : undefined,
  )
  let killed: string | null = null
  const running = statesOf(chain, await stepSessions(ctx, chain)).find((s) => s.status === 'RUNNING')
  if (running?.session) {
    const { stopSession } = await import('../control/control.js')
    try {
      const result = await stopSession(ctx, running.session.id, 'kill', graceMs)
      if (result.produced) killed = running.session.id
    } catch (error) {
      // It ended by itself meanwhile: nothing of it is left to stop.
      if (!(error instanceof IllegalStateError)) throw error
    }
  }
  const { stopProcessTree } = await import('../../process/stop.js')
  await stopProcessTree(runner as ChainRunner & { start_time: string | null }, { graceMs })
  await releaseRunner(chains, name, runner, 'killed by "harness chain kill"')
  return { name, runner_pid: runner.pid, killed_session: killed, chain: await chainStatus(ctx, name) }
}

async function releaseRunner(chains: ChainStore, name: string, runner: ChainRunner, outcome: string) {
  await chains.update(name, (current) =>
    ownsRunner(current, { pid: runner.pid, start_time: runner.start_time ?? null })
      ? { ...current, runner: null, stop_request: null, last_outcome: outcome }
      : undefined,
  )
}
