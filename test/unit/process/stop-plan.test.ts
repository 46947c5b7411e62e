import { describe, expect, it } from 'vitest'
import type { ProcStat } from '../../../src/process/identity.js'
import {
  collectMembers,
  type Member,
  nextStep,
  planSignals,
  scanCanFind,
  stopOutcome,
} from '../../../src/process/stop.js'

// The pure parts of stopping a tree (docs/development/design.md, "Stopping"): which processes belong to it,
// who gets which signal, and when to escalate. The real signals and processes are in stop.test.ts.

const ROOT = { pid: 100, start_time: '1000' }
const SELF = 999

function stat(pid: number, ppid: number, pgrp: number, startTime = `${pid}0`, state = 'S'): ProcStat {
  return { pid, ppid, pgrp, state, session: pgrp, startTime }
}

function member(pid: number, startTime = `${pid}0`, more: Partial<Member> = {}): Member {
  return { pid, start_time: startTime, gone: false, term: false, kill: false, ...more }
}

const rootStat = stat(100, 1, 100, '1000')

describe('collectMembers (tree collection)', () => {
  it('takes the root, its group and its descendants, never pid 1 or this process', () => {
    const table = [
      stat(1, 0, 1),
      rootStat,
      stat(101, 100, 100), // child in the group
      stat(102, 101, 102), // grandchild that left the group: still a descendant
      stat(103, 1, 100), // reparented, still in the group
      stat(SELF, 100, 100), // this process (as a child of the root): never a member
      stat(200, 1, 200), // a stranger
    ]
    const members = collectMembers([], table, ROOT, SELF)
    expect(members.map((m) => m.pid).sort()).toEqual([100, 101, 102, 103])
    expect(members.every((m) => !m.gone && !m.term && !m.kill)).toBe(true)
  })

  it('takes nothing when the pid now belongs to another process', () => {
    const table = [stat(100, 1, 100, '5555'), stat(101, 100, 100)]
    expect(collectMembers([], table, ROOT, SELF)).toEqual([])
  })

  it('marks members gone that exited, became zombies or whose pid was reused, and keeps what they were sent', () => {
    const before = [
      member(100, '1000', { term: true }),
      member(101, '1010', { term: true }),
      member(102, '1020'),
      member(103, '1030'),
    ]
    const table = [stat(101, 100, 100, '1010', 'Z'), stat(102, 1, 102, '9999'), stat(103, 1, 103, '1030')]
    const after = collectMembers(before, table, ROOT, SELF)
    expect(after.map((m) => [m.pid, m.gone, m.term])).toEqual([
      [100, true, true],
      [101, true, true],
      [102, true, false],
      [103, false, false],
    ])
    expect(before.every((m) => !m.gone)).toBe(true) // the input is not changed
  })

  it('adopts children of running members after the root is gone, never children of a gone one', () => {
    const before = [
      member(100, '1000', { gone: true }),
      member(101, '1010'),
      member(102, '1020', { gone: true }),
    ]
    const table = [stat(101, 1, 100, '1010'), stat(110, 101, 110), stat(120, 102, 120, '1200')]
    const after = collectMembers(before, table, ROOT, SELF)
    expect(after.filter((m) => !m.gone).map((m) => m.pid)).toEqual([101, 110])
  })

  it('does not add a member twice', () => {
    const first = collectMembers([], [rootStat, stat(101, 100, 100)], ROOT, SELF)
    const again = collectMembers(first, [rootStat, stat(101, 100, 100)], ROOT, SELF)
    expect(again).toHaveLength(2)
  })
})

describe('scanCanFind', () => {
  it('is false only when every member is gone and the root no longer holds its pid', () => {
    expect(scanCanFind([member(100, '1000', { gone: true })], false)).toBe(false)
    expect(scanCanFind([], false)).toBe(false)
    // A zombie root still holds its pid, and so its group id: the group may hold processes never seen.
    expect(scanCanFind([member(100, '1000', { gone: true })], true)).toBe(true)
    expect(scanCanFind([member(100, '1000', { gone: true }), member(101)], false)).toBe(true)
  })
})

describe('planSignals', () => {
  const members = [
    member(100, '1000'),
    member(101, '1010'),
    member(102, '1020'),
    member(103, '1030', { term: true }),
    member(104, '1040', { gone: true }),
    member(105, '1050'),
  ]
  const stats = new Map<number, ProcStat | null>([
    [100, stat(100, 1, 100, '1000')],
    [101, stat(101, 100, 100, '1010')],
    [102, stat(102, 101, 102, '1020')], // left the group
    [103, stat(103, 100, 100, '1030')],
    [105, stat(105, 100, 100, '1050', 'Z')],
  ])

  it('sends the group signal to group members and single signals to the rest; skips the gone and the sent', () => {
    const plan = planSignals(members, 'SIGTERM', stats, ROOT, true)
    expect(plan.group.map((m) => m.pid)).toEqual([100, 101])
    expect(plan.each.map((m) => m.pid)).toEqual([102])
    expect(plan.gone.map((m) => m.pid)).toEqual([105])
  })

  it('signals one by one when the group may not be used', () => {
    const plan = planSignals(members, 'SIGTERM', stats, ROOT, false)
    expect(plan.group).toEqual([])
    expect(plan.each.map((m) => m.pid)).toEqual([100, 101, 102])
  })

  it('SIGKILL goes to members that had SIGTERM', () => {
    const plan = planSignals(members, 'SIGKILL', stats, ROOT, true)
    expect(plan.group.map((m) => m.pid)).toEqual([100, 101, 103])
  })

  it('never signals a pid whose start time changed or that cannot be read', () => {
    const reused = new Map<number, ProcStat | null>([
      [100, stat(100, 1, 100, '7777')],
      [101, null],
    ])
    const plan = planSignals([member(100, '1000'), member(101, '1010')], 'SIGTERM', reused, ROOT, true)
    expect(plan.group).toEqual([])
    expect(plan.each).toEqual([])
    expect(plan.gone.map((m) => m.pid)).toEqual([100, 101])
  })
})

describe('nextStep (escalation plan)', () => {
  const base = { live: 1, escalated: false, now: 100, graceEnds: 1000, confirmEnds: Infinity, aborted: false }

  it('is done when nothing is left, escalated or not', () => {
    expect(nextStep({ ...base, live: 0 })).toBe('done')
    expect(nextStep({ ...base, live: 0, escalated: true, now: 5000, confirmEnds: 10 })).toBe('done')
  })

  it('waits out the grace period, then escalates; aborting escalates at once', () => {
    expect(nextStep(base)).toBe('wait')
    expect(nextStep({ ...base, now: 1000 })).toBe('escalate')
    expect(nextStep({ ...base, aborted: true })).toBe('escalate')
  })

  it('after SIGKILL waits until the confirmation time, then gives up', () => {
    expect(nextStep({ ...base, escalated: true, now: 1500, confirmEnds: 3000 })).toBe('wait')
    expect(nextStep({ ...base, escalated: true, now: 3000, confirmEnds: 3000 })).toBe('give-up')
  })
})

describe('stopOutcome', () => {
  it('counts what was signalled and killed, whether the root was, and who survived', () => {
    const facts = { hostname: 'h', boot_id: 'b', pid_namespace: 'n' }
    const members = [
      member(100, '1000', { term: true, gone: true }),
      member(101, '1010', { term: true, kill: true, gone: true }),
      member(102, '1020', { term: true, kill: true }),
      member(103, '1030', { gone: true }),
    ]
    expect(stopOutcome(members, ROOT, 'alive', facts, 12)).toEqual({
      rootFound: true,
      rootState: 'alive',
      signalled: 3,
      rootSignalled: true,
      killed: 2,
      survivors: [{ pid: 102, start_time: '1020', ...facts }],
      elapsedMs: 12,
    })
    const untouched = stopOutcome([member(100, '1000', { gone: true })], ROOT, 'exited', facts, 0)
    expect(untouched).toMatchObject({ rootSignalled: false, signalled: 0, survivors: [] })
  })
})
