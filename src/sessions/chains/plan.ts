import type { SessionStatus } from '../record/schema.js'
import type { Chain, ChainStep } from './store.js'

/** A step's status: its session's, PENDING before it has one, MISSING when an adopted session is gone. */
export type StepStatus = SessionStatus | 'PENDING' | 'MISSING'

/** What the plan needs of a step's session. */
export interface StepSession {
  id: string
  status: SessionStatus
  git_branch?: string | null
  created_at: string
  completed_at?: string | null
  updated_at?: string | null
}

export interface StepState {
  step: ChainStep
  status: StepStatus
  session: StepSession | null
}

function stepStatus(step: ChainStep, session: StepSession | null): StepStatus {
  if (!step.session_id) return 'PENDING'
  if (!session) return step.completed_at ? 'COMPLETED' : step.adopted ? 'MISSING' : 'PENDING'
  return session.status
}

export function stepStates(chain: Chain, lookup: (id: string) => StepSession | null): StepState[] {
  return chain.steps.map((step) => {
    const session = step.session_id ? lookup(step.session_id) : null
    return { step, status: stepStatus(step, session), session }
  })
}

export type NextStep =
  | { kind: 'done' }
  /** A new session, its worktree from `base` (the previous step's branch; null: the project's HEAD). */
  | { kind: 'start'; index: number; base: string | null; previous: StepSession | null }
  /** The step's session ended without completing (PAUSED, FAILED, KILLED): resume it. */
  | { kind: 'resume'; index: number; id: string; previous: StepSession | null }
  | { kind: 'blocked'; index: number; reason: string }

/**
 * Where `chain run` continues (docs/continuity.md, "Chains"): at the first step that is not COMPLETED. A step
 * starts only when the one before it completed, so steps after the first incomplete one are never looked at.
 */
export function nextStep(states: StepState[]): NextStep {
  const index = states.findIndex((state) => state.status !== 'COMPLETED')
  if (index < 0) return { kind: 'done' }
  const state = states[index] as StepState
  const previous = index > 0 ? ((states[index - 1] as StepState).session ?? null) : null
  switch (state.status) {
    case 'PENDING':
      return { kind: 'start', index, base: previous?.git_branch ?? null, previous }
    case 'PAUSED':
    case 'FAILED':
    case 'KILLED':
      return { kind: 'resume', index, id: state.session?.id as string, previous }
    case 'RUNNING':
      return {
        kind: 'blocked',
        index,
        reason: `step ${state.step.n} (session ${state.session?.id}) is still running`,
      }
    case 'MISSING':
      return {
        kind: 'blocked',
        index,
        reason: `step ${state.step.n}: its session ${state.step.session_id} no longer exists`,
      }
    default:
      return { kind: 'blocked', index, reason: `step ${state.step.n} is ${state.status}` }
  }
}

/** What a PENDING step waits for, in words (`chain status`): the step before it, or a `chain run`. */
export function waitsFor(states: StepState[], index: number, runnerAlive: boolean): string | null {
  if (states[index]?.status !== 'PENDING') return null
  const before = states[index - 1]
  if (before && before.status !== 'COMPLETED') {
    if (before.status === 'PENDING' || before.status === 'RUNNING') {
      return `waits for step ${before.step.n}${before.status === 'RUNNING' ? ' (RUNNING)' : ''}`
    }
    return `waits for step ${before.step.n} to complete (it is ${before.status})`
  }
  return runnerAlive ? 'starts next' : 'ready: waits for "harness chain run"'
}

export type ChainState = 'empty' | 'pending' | 'running' | 'completed' | 'stopped' | 'paused' | 'blocked'

/** One word for the whole chain: `running` only while its runner is alive. */
export function chainState(states: StepState[], runnerAlive: boolean): ChainState {
  if (runnerAlive) return 'running'
  if (states.length === 0) return 'empty'
  const next = nextStep(states)
  if (next.kind === 'done') return 'completed'
  const status = (states[next.index] as StepState).status
  if (status === 'FAILED' || status === 'KILLED') return 'stopped'
  if (status === 'PAUSED') return 'paused'
  if (status === 'RUNNING' || status === 'MISSING') return 'blocked'
  return 'pending'
}

/** The time shown beside a step: when it ended, else when it started, else when it was added. */
export function stepTime(state: StepState): string {
  const session = state.session
  if (!session) return state.step.completed_at ?? state.step.added_at
  if (session.status === 'RUNNING') return session.created_at
  return session.completed_at ?? session.updated_at ?? session.created_at
}
