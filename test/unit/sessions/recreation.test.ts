import { describe, expect, test } from 'vitest'
import { describeRecreation, planRecreation } from '../../../src/sessions/recreation.js'
import { sessionRecord } from '../../fixtures/records.js'

const checkpoint = (n: number, head: string | null, commit = `c${n}`.padEnd(40, '0')) => ({
  n,
  ref: `refs/harness/s1/checkpoints/${n}`,
  commit,
  head,
  created_at: `2026-09-24T18:0${n}:00.000Z`,
  trigger: n === 1 ? 'run-end' : 'interval',
})
const TIP = 'a'.repeat(40)
const session = sessionRecord('s1', { checkpoints: [checkpoint(0, 'b'.repeat(40)), checkpoint(1, TIP)] })
const present = (...ns: number[]) => new Set(ns.map((n) => `c${n}`.padEnd(40, '0')))

describe('planRecreation: what resume does for a worktree that is gone', () => {
  test('the branch, with the files of the latest checkpoint when it was taken on the tip', () => {
    const plan = planRecreation(session, { branchTip: TIP, presentCommits: present(0, 1) })
    expect(plan).toMatchObject({ kind: 'branch', branch: 'harness/s1', restore: { n: 1 } })
    expect(describeRecreation(plan)).toBe(
      'from its branch harness/s1, with the files of checkpoint 1 (run-end, 2026-09-24T18:01:00.000Z): the work it left uncommitted',
    )
  })

  test('the branch alone when it moved since (its commits hold the work), or the checkpoint is gone', () => {
    for (const facts of [
      { branchTip: 'd'.repeat(40), presentCommits: present(0, 1) },
      { branchTip: TIP, presentCommits: present(0) },
    ]) {
      const plan = planRecreation(session, facts)
      expect(plan).toEqual({ kind: 'branch', branch: 'harness/s1', restore: null })
      expect(describeRecreation(plan)).toBe('from its branch harness/s1')
    }
  })

  test('branch gone too: from the latest checkpoint, branch included; else nothing', () => {
    const plan = planRecreation(session, { branchTip: null, presentCommits: present(0, 1) })
    expect(plan).toMatchObject({ kind: 'checkpoint', checkpoint: { n: 1, head: TIP } })
    expect(describeRecreation(plan)).toBe(
      'and its branch harness/s1 (gone too) from checkpoint 1 (run-end, 2026-09-24T18:01:00.000Z)',
    )
    expect(planRecreation(session, { branchTip: null, presentCommits: new Set() })).toEqual({
      kind: 'none',
      why: 'its branch harness/s1 is gone too, and no checkpoint of it remains',
    })
  })

  test('a session without a worktree of its own has nothing to recreate', () => {
    const plain = sessionRecord('s2', { is_worktree: false, git_branch: null })
    expect(planRecreation(plain, { branchTip: null, presentCommits: new Set() })).toMatchObject({
      kind: 'none',
      why: 'it ran in that folder itself (no worktree of its own)',
    })
  })
})
