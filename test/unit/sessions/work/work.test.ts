import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  checkpointSession,
  listSessionCheckpoints,
  restoreSession,
} from '../../../../src/sessions/work/checkpoints.js'
import { diffSession } from '../../../../src/sessions/work/diff.js'
import { mergeSession } from '../../../../src/sessions/work/merge.js'
import { FakeClock, fakeEnv, finishedRecord, runningRecord } from '../../../helpers/fake-env.js'
import { sessionWorktree, tmpGitRepo } from '../../../helpers/tmp.js'

/**
 * The work services (checkpoint, restore, diff, merge) through their port: the record in a memory store, the
 * process table and clock fakes, the repository and the session's worktree real (git made them).
 */
function session(status: 'done' | 'running' = 'done') {
  const repo = tmpGitRepo()
  repo.write('notes.txt', 'base\n')
  repo.git('add', '-A')
  repo.git('commit', '-q', '-m', 'base')
  const id = 'work0001'
  const dir = sessionWorktree(repo, id)
  // The project's folders exist, as after any run: a checkpoint takes its lock beside the records.
  mkdirSync(join(repo.dir, '.harness', 'sessions'), { recursive: true })
  const facts = {
    worktree_dir: dir,
    is_worktree: true,
    git_branch: `harness/${id}`,
    branch_created: true,
    base_dir: repo.dir,
    base_ref: 'main',
    base_commit: repo.git('rev-parse', 'HEAD'),
  }
  const record =
    status === 'done'
      ? finishedRecord(id, facts)
      : runningRecord(id, { supervisor: [50, 's50'], agent: [51, 'a51'] }, facts)
  const fake = fakeEnv({ root: repo.dir, env: repo.env, records: [record], clock: new FakeClock() })
  return { repo, dir, ...fake }
}

describe('work on a session, through the port', () => {
  test('checkpoint, change, restore, diff, merge: each on the real worktree, the record in the port store', async () => {
    const { repo, dir, env, store } = session()
    writeFileSync(join(dir, 'notes.txt'), 'first draft\n')
    const taken = await checkpointSession(env, 'work0001', 'the first draft')
    expect(taken.checkpoint).toMatchObject({ n: 0, created_at: '2026-10-01T12:00:00.000Z' })
    expect((await listSessionCheckpoints(env, 'work')).checkpoints).toEqual([
      expect.objectContaining({ n: 0, trigger: 'manual', message: 'the first draft' }),
    ])

    writeFileSync(join(dir, 'notes.txt'), 'a mistake\n')
    await restoreSession(env, 'work0001', '0')
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('first draft\n')

    const diff = await diffSession(env, 'work0001', 'patch')
    expect(diff).toMatchObject({ source: 'worktree', files: ['notes.txt'] })
    expect(diff.diff).toContain('+first draft')

    repo.git('-C', dir, 'commit', '-qam', 'the draft')
    const merged = await mergeSession(env, 'work0001', { squash: false, rebase: false, dryRun: false })
    expect(merged).toMatchObject({ id: 'work0001', merged_at: '2026-10-01T12:00:00.000Z' })
    expect(readFileSync(join(repo.dir, 'notes.txt'), 'utf8')).toBe('first draft\n')
    // Every write went to the port's store.
    expect(store.writes.length).toBeGreaterThan(0)
    expect(store.get('work0001')?.checkpoints?.length).toBeGreaterThan(0)
  })

  test('a session the port says is running is neither restored nor merged', async () => {
    const { env, processes, repo } = session('running')
    processes.alive(50, 's50').alive(51, 'a51')
    await expect(restoreSession(env, 'work0001', '1')).rejects.toMatchObject({ code: 'SESSION_RUNNING' })
    await expect(
      mergeSession(env, 'work0001', { squash: false, rebase: false, dryRun: false }),
    ).rejects.toMatchObject({ code: 'SESSION_RUNNING' })
    expect(readFileSync(join(repo.dir, 'notes.txt'), 'utf8')).toBe('base\n')
  })
})
