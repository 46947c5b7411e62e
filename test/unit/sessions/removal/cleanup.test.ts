import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cleanupSessions } from '../../../../src/sessions/removal/cleanup.js'
import { FakeClock, fakeEnv, finishedRecord, runningRecord } from '../../../helpers/fake-env.js'
import { sessionWorktree, tmpGitRepo } from '../../../helpers/tmp.js'

const NOW = Date.parse('2026-11-01T12:00:00.000Z')
const DAY = 86_400_000
const WEEK = { text: '7d', ms: 7 * DAY }

/**
 * cleanup through its port: the records in a memory store, the process table and the clock fakes; the project a
 * real git repository whose worktrees git made, since what cleanup removes there is git's (folders, registrations,
 * branches).
 */
function project() {
  const repo = tmpGitRepo()
  const worktree = (id: string, extra: Record<string, unknown> = {}) => {
    const dir = sessionWorktree(repo, id)
    return finishedRecord(id, {
      worktree_dir: dir,
      is_worktree: true,
      git_branch: `harness/${id}`,
      branch_created: true,
      base_dir: repo.dir,
      base_branch: 'main',
      created_at: new Date(NOW - 30 * DAY).toISOString(),
      completed_at: new Date(NOW - 30 * DAY).toISOString(),
      updated_at: new Date(NOW - 30 * DAY).toISOString(),
      runs: [],
      ...extra,
    })
  }
  return { repo, worktree }
}

describe('cleanup, through its port', () => {
  test('removes an old clean session (worktree, branch, record), keeps a dirty one, and decides age by the port clock', async () => {
    const { repo, worktree } = project()
    const old = worktree('old00001')
    const dirty = worktree('dirt0001')
    writeFileSync(join(dirty.worktree_dir, 'unsaved.txt'), 'work in progress\n')
    // An hour old by the port clock (and two months by the machine's: the port's is the one that counts).
    const young = worktree('youn0001', {
      created_at: new Date(NOW - 3_600_000).toISOString(),
      completed_at: new Date(NOW - 3_600_000).toISOString(),
      updated_at: new Date(NOW - 3_600_000).toISOString(),
    })
    const { env, store } = fakeEnv({
      root: repo.dir,
      env: repo.env,
      records: [old, dirty, young],
      clock: new FakeClock(NOW),
    })

    const report = await cleanupSessions(env, { olderThan: WEEK, force: false, dryRun: false })

    expect(report.removed.map((r) => r.id)).toEqual(['old00001'])
    expect(report.kept.map((k) => k.id)).toEqual(['dirt0001'])
    expect(report.skipped).toMatchObject({ younger: 1, running: 0 })
    expect(existsSync(old.worktree_dir)).toBe(false)
    expect(repo.git('branch', '--list', 'harness/old00001')).toBe('')
    expect(store.get('old00001')).toBeNull()
    expect(existsSync(join(dirty.worktree_dir, 'unsaved.txt'))).toBe(true)
    expect(store.get('dirt0001')).not.toBeNull()
    expect(store.get('youn0001')).not.toBeNull()
  })

  test('a RUNNING session is never taken: a live one is left alone, a stale one reconciled by the port and still kept', async () => {
    const { repo, worktree } = project()
    const live = runningRecord('live0001', { supervisor: [50, 's50'], agent: [51, 'a51'] })
    const stale = runningRecord('stal0001', { supervisor: [52, 's52'], agent: [53, 'a53'] })
    for (const record of [live, stale]) {
      const made = worktree(record.id)
      Object.assign(record, {
        worktree_dir: made.worktree_dir,
        is_worktree: true,
        git_branch: made.git_branch,
        base_dir: repo.dir,
      })
    }
    const { env, store, processes } = fakeEnv({
      root: repo.dir,
      env: repo.env,
      records: [live, stale],
      clock: new FakeClock(NOW),
    })
    processes.alive(50, 's50').alive(51, 'a51')

    const report = await cleanupSessions(env, { olderThan: { text: '0', ms: 0 }, force: true, dryRun: false })

    expect(report.removed).toEqual([])
    expect(report.skipped).toMatchObject({ running: 2 })
    expect(store.get('live0001')?.status).toBe('RUNNING')
    expect(store.get('stal0001')).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupted' })
    expect(existsSync(live.worktree_dir)).toBe(true)
    expect(existsSync(stale.worktree_dir)).toBe(true)
    expect(processes.signals).toEqual([])
  })

  test('--dry-run plans the same and changes nothing: no write to the store, every worktree in place', async () => {
    const { repo, worktree } = project()
    const old = worktree('old00001')
    const { env, store } = fakeEnv({
      root: repo.dir,
      env: repo.env,
      records: [old],
      clock: new FakeClock(NOW),
    })
    const report = await cleanupSessions(env, { olderThan: WEEK, force: false, dryRun: true })
    expect(report.removed.map((r) => r.id)).toEqual(['old00001'])
    expect(store.writes).toEqual([])
    expect(store.get('old00001')).not.toBeNull()
    expect(existsSync(old.worktree_dir)).toBe(true)
    expect(repo.git('branch', '--list', 'harness/old00001')).not.toBe('')
  })
})
