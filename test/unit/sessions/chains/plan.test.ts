import { describe, expect, test } from 'vitest'
import {
  chainState,
  nextStep,
  type StepSession,
  stepStates,
  waitsFor,
} from '../../../../src/sessions/chains/plan.js'
import type { Chain, ChainStep } from '../../../../src/sessions/chains/store.js'
import type { SessionStatus } from '../../../../src/sessions/record/schema.js'

const at = '2026-01-01T00:00:00.000Z'

function chainOf(steps: Partial<ChainStep>[]): Chain {
  return {
    name: 'c',
    created_at: at,
    steps: steps.map((s, i) => ({ n: i + 1, added_at: at, ...s })),
  }
}

function sessions(statuses: Record<string, SessionStatus>) {
  return (id: string): StepSession | null =>
    statuses[id] ? { id, status: statuses[id], git_branch: `harness/${id}`, created_at: at } : null
}

describe('chain plan', () => {
  test("continues at the first step not COMPLETED, from the previous step's branch", () => {
    const chain = chainOf([{ session_id: 'a' }, { session_id: 'b' }, {}])
    const states = stepStates(chain, sessions({ a: 'COMPLETED', b: 'COMPLETED' }))
    expect(states.map((s) => s.status)).toEqual(['COMPLETED', 'COMPLETED', 'PENDING'])
    const next = nextStep(states)
    expect(next).toMatchObject({ kind: 'start', index: 2, base: 'harness/b' })
    expect(nextStep(stepStates(chainOf([{}]), sessions({})))).toMatchObject({ kind: 'start', base: null })
  })

  test.each(['PAUSED', 'FAILED', 'KILLED'] as const)('a %s step is resumed, later steps wait', (status) => {
    const states = stepStates(
      chainOf([{ session_id: 'a' }, { session_id: 'b' }, { session_id: 'c' }]),
      sessions({ a: 'COMPLETED', b: status, c: 'COMPLETED' }),
    )
    expect(nextStep(states)).toMatchObject({ kind: 'resume', index: 1, id: 'b' })
    expect(chainState(states, false)).toBe(status === 'PAUSED' ? 'paused' : 'stopped')
  })

  test('a step whose session is not there yet is PENDING; an adopted one that is gone is MISSING', () => {
    const states = stepStates(
      chainOf([{ session_id: 'gone' }, { session_id: 'lost', adopted: true }]),
      sessions({}),
    )
    expect(states.map((s) => s.status)).toEqual(['PENDING', 'MISSING'])
    // One that completed stays done after cleanup removed its session.
    const cleaned = stepStates(chainOf([{ session_id: 'old', completed_at: at }, {}]), sessions({}))
    expect(cleaned.map((s) => s.status)).toEqual(['COMPLETED', 'PENDING'])
    expect(nextStep(cleaned)).toMatchObject({ kind: 'start', index: 1, base: null })
    expect(nextStep(states)).toMatchObject({ kind: 'start', index: 0 })
    const blocked = stepStates(chainOf([{ session_id: 'lost', adopted: true }]), sessions({}))
    expect(nextStep(blocked)).toMatchObject({ kind: 'blocked', index: 0 })
    const running = stepStates(chainOf([{ session_id: 'r' }]), sessions({ r: 'RUNNING' }))
    expect(nextStep(running)).toMatchObject({ kind: 'blocked' })
  })

  test('done when every step completed; what pending steps wait for', () => {
    const done = stepStates(chainOf([{ session_id: 'a' }]), sessions({ a: 'COMPLETED' }))
    expect(nextStep(done)).toEqual({ kind: 'done' })
    expect(chainState(done, false)).toBe('completed')
    expect(chainState([], false)).toBe('empty')
    const states = stepStates(chainOf([{ session_id: 'a' }, {}, {}]), sessions({ a: 'FAILED' }))
    expect(waitsFor(states, 0, false)).toBeNull()
    expect(waitsFor(states, 1, false)).toBe('waits for step 1 to complete (it is FAILED)')
    expect(waitsFor(states, 2, false)).toBe('waits for step 2')
    const ready = stepStates(chainOf([{ session_id: 'a' }, {}]), sessions({ a: 'COMPLETED' }))
    expect(waitsFor(ready, 1, false)).toMatch(/chain run/)
    expect(waitsFor(ready, 1, true)).toBe('starts next')
    expect(chainState(ready, true)).toBe('running')
  })
})
