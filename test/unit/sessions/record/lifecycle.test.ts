import { describe, expect, test } from 'vitest'
import { IllegalTransitionError } from '../../../../src/errors.js'
import {
  nextStatus,
  SESSION_EVENTS,
  type SessionEvent,
  type TransitionFrom,
  transition,
} from '../../../../src/sessions/record/lifecycle.js'
import { SESSION_STATUSES } from '../../../../src/sessions/record/schema.js'

/** The lifecycle of docs/record.md, written out independently of the implementation: every legal (from, event) → to. */
const LEGAL: Record<string, string> = {
  'new:start': 'RUNNING',
  'RUNNING:exit-ok': 'COMPLETED',
  'RUNNING:exit-error': 'FAILED',
  'RUNNING:kill': 'KILLED',
  'RUNNING:pause': 'PAUSED',
  'RUNNING:interrupt': 'PAUSED',
  'RUNNING:reconcile': 'PAUSED',
  'RUNNING:recover': 'PAUSED',
  'PAUSED:resume': 'RUNNING',
  'COMPLETED:resume': 'RUNNING',
  'FAILED:resume': 'RUNNING',
  'KILLED:resume': 'RUNNING',
}

const FROMS: TransitionFrom[] = [null, ...SESSION_STATUSES]

describe('transition', () => {
  for (const from of FROMS) {
    for (const event of SESSION_EVENTS) {
      const key = `${from ?? 'new'}:${event}`
      const expected = LEGAL[key]
      test(`${key} → ${expected ?? 'illegal'}`, () => {
        if (expected) {
          expect(transition(from, event as SessionEvent)).toBe(expected)
        } else {
          expect(nextStatus(from, event as SessionEvent)).toBeUndefined()
          expect(() => transition(from, event as SessionEvent, 'abcd1234')).toThrow(IllegalTransitionError)
          try {
            transition(from, event as SessionEvent, 'abcd1234')
          } catch (error) {
            expect((error as IllegalTransitionError).exitCode).toBe(4)
            expect((error as IllegalTransitionError).message).toContain('abcd1234')
          }
        }
      })
    }
  }

  test('the table above covers exactly the legal pairs', () => {
    let legal = 0
    for (const from of FROMS) for (const event of SESSION_EVENTS) if (nextStatus(from, event)) legal++
    expect(legal).toBe(Object.keys(LEGAL).length)
  })
})
