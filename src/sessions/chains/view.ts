import { join } from 'node:path'
import type { Processes, SessionEnv } from '../ports.js'
import { seen } from '../query/query.js'
import type { SessionView } from '../query/reconcile.js'
import { reconcileView } from '../query/reconcile.js'
import type { SessionRecord } from '../record/schema.js'
import { RecordSealer } from '../record/seal.js'
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
  assertValidChainName,
  type Chain,
  ChainNotFoundError,
  type ChainRunner,
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
  return new ChainStore(join(paths.harnessDir, 'chains'), RecordSealer.forEnv(ctx.env), (path, reason) =>
    ctx.warn(`${path}: ${reason}`),
  )
}

export async function getChain(chains: ChainStore, name: string): Promise<Chain> {
  const chain = chains.get(assertValidChainName(name))
  if (!chain) throw new ChainNotFoundError(name)
  return chain
}

/** Whether the chain's runner lives, as the process table (`processes`, the port's) says. */
export function runnerLiveness(chain: Chain, processes: Pick<Processes, 'check'>): RunnerLiveness | null {
  const runner = chain.runner
  if (!runner) return null
  const check = processes.check(runner)
  const liveness = check === 'alive' ? 'running' : check === 'dead' ? 'stale' : 'unverified'
  // A foreign chain is never acted on (docs/security.md): only "verifiably gone" is believed of it.
  return chain.sealed !== true && liveness !== 'stale' ? 'unverified' : liveness
}

export function ownsRunner(chain: Chain, self: { pid: number; start_time: string | null }): boolean {
  return chain.runner?.pid === self.pid && (chain.runner.start_time ?? null) === self.start_time
}

/** The step sessions, stale ones reconciled on the way (as every read of a session does). */
export async function stepSessions(ctx: SessionEnv, chain: Chain): Promise<Map<string, SessionView | null>> {
  const store = await ctx.store()
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
    found.set(
      id,
      record && record.status === 'RUNNING'
        ? await reconcileView(store, record, false, ...seen(ctx))
        : record,
    )
  }
  return found
}

export function statesOf(chain: Chain, sessions: Map<string, SessionView | null>): StepState[] {
  return stepStates(chain, (id) => (sessions.get(id) as StepSession | null | undefined) ?? null)
}

function chainView(chain: Chain, states: StepState[], liveness: RunnerLiveness | null): ChainView {
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

export async function viewOf(ctx: SessionEnv, chain: Chain): Promise<ChainView> {
  return chainView(
    chain,
    statesOf(chain, await stepSessions(ctx, chain)),
    runnerLiveness(chain, ctx.processes),
  )
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
