import { pathExists } from '../../disk/door.js'
import { ExitRequest, IllegalStateError } from '../../errors.js'
import { commitUncommittedWork } from '../../git/carry.js'
import { identify, type ProcessIdentity } from '../../process/identity.js'
import { startDetachedHarness } from '../../process/supervisor.js'
import type { SessionEnv } from '../ports.js'
import { generateSessionId } from '../record/ids.js'
import { signalExitCode } from '../record/outcome.js'
import { resumeSession, startSession } from '../run/start.js'
import { nextStep, type StepSession, type StepState } from './plan.js'
import { assertSealedChain, assertValidChainName, type ChainRunner, type ChainStore } from './store.js'
import {
  type ChainView,
  getChain,
  openChains,
  ownsRunner,
  runnerLiveness,
  statesOf,
  stepSessions,
  viewOf,
} from './view.js'

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
    const runner = await startDetachedHarness(
      ['--dir', paths.harnessDir, '__chain-run', name],
      ctx.env,
      ctx.cwd,
    )
    let committed = false
    try {
      await claimRunner(ctx, chains, name, runner.identity, true)
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
  await claimRunner(ctx, chains, name, self, false)
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
  ctx: SessionEnv,
  chains: ChainStore,
  name: string,
  self: ProcessIdentity,
  detached: boolean,
): Promise<void> {
  await chains.update(name, (current) => {
    assertSealedChain(current)
    const liveness = runnerLiveness(current, ctx.processes)
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
      started_at: new Date(ctx.clock.now()).toISOString(),
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
    storeOf: (paths) => ctx.storeOf(paths),
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
  if (!record?.is_worktree || record.sealed !== true || !pathExists(record.worktree_dir)) return null
  const task = (record.prompt ?? '').split('\n')[0]?.trim()
  const message = task
    ? `${task} (harness chain ${name}, step ${n})`
    : `harness chain ${name}, step ${n}: the work session ${record.id} left uncommitted`
  return commitUncommittedWork(record.worktree_dir, message, { env: ctx.env })
}
