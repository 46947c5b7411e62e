import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { isInsideRoots } from '../../src/config.js'
import { removeWorktreeFolder } from '../../src/git/removal.js'
import { listWorktrees } from '../../src/git/worktree-list.js'
import { decideRemoval } from '../../src/sessions/removal/decision.js'
import { executeRemovals } from '../../src/sessions/removal/executor.js'
import { RepoCache } from '../../src/sessions/removal/repo-view.js'
import { planSession, sessionCandidate } from '../../src/sessions/removal/session-plan.js'
import { SessionStore } from '../../src/sessions/store.js'
import { sessionRecord, testSealer } from '../fixtures/records.js'
import { tmpGitRepo } from '../helpers/tmp.js'

/** A repository with finished sessions, each a real worktree on harness/<id> at main's tip (merged). */
async function sessionsFixture(ids: string[]) {
  const repo = tmpGitRepo()
  const harness = join(repo.dir, '.harness')
  const root = join(harness, 'worktrees')
  const logsDir = join(harness, 'logs')
  mkdirSync(logsDir, { recursive: true })
  const store = new SessionStore(join(harness, 'sessions'), { sealer: testSealer() })
  store.ensureDir()
  const base = repo.git('rev-parse', 'HEAD')
  for (const id of ids) {
    const wt = join(root, id)
    repo.git('worktree', 'add', '-q', '-b', `harness/${id}`, wt)
    writeFileSync(join(logsDir, `${id}.log`), 'log\n')
    await store.create(
      sessionRecord(id, {
        worktree_dir: wt,
        base_dir: repo.dir,
        base_commit: base,
        branch_created: true,
        checkpoints: [],
      }),
    )
  }
  const where = {
    repos: new RepoCache(repo.dir, repo.env),
    projectRoot: repo.dir,
    logsDir,
    isInsideRoots: (path: string) => isInsideRoots(path, [root]),
    force: false,
  }
  const plan = async () =>
    Promise.all(
      store.list().map(async (record) => {
        const planned = await planSession(record, where)
        return { candidate: sessionCandidate(planned), verdict: decideRemoval(planned.reasons, false) }
      }),
    )
  return { repo, store, root, logsDir, base, plan }
}

describe('batched removal (cleanup)', () => {
  test('a branch moved after planning is not deleted; the others go in the same batch', async () => {
    const { repo, store, root, logsDir, plan } = await sessionsFixture(['aaaa0001', 'bbbb0002', 'cccc0003'])
    // A checkpoint ref of one session goes in the same transaction.
    repo.git('update-ref', 'refs/harness/cccc0003/checkpoints/1', 'HEAD')
    await store.update('cccc0003', (r) => ({
      ...r,
      checkpoints: [
        {
          n: 1,
          ref: 'refs/harness/cccc0003/checkpoints/1',
          commit: repo.git('rev-parse', 'HEAD'),
          created_at: new Date().toISOString(),
        },
      ],
    }))
    // A SIGKILLed supervisor's disk-space reserve beside the log goes with its session.
    writeFileSync(join(logsDir, 'aaaa0001.reserve'), Buffer.alloc(64))
    const items = await plan()
    expect(items.map((item) => item.verdict)).toEqual(Array(3).fill({ action: 'remove', forced: false }))

    // After planning, someone moves harness/bbbb0002 to a commit only it has.
    const moved = repo.git('commit-tree', '-p', 'HEAD', '-m', 'moved', 'HEAD^{tree}')
    repo.git('update-ref', 'refs/heads/harness/bbbb0002', moved)

    const results = await executeRemovals(items, { dryRun: false, store, env: repo.env })
    const byId = new Map(items.map((item, i) => [item.candidate.record?.id, results[i]]))
    expect(byId.get('aaaa0001')?.status).toBe('removed')
    expect(byId.get('cccc0003')?.status).toBe('removed')
    const kept = byId.get('bbbb0002')
    expect(kept?.status).toBe('kept')
    expect(kept?.status === 'kept' && kept.reasons.map((r) => [r.code, r.kind])).toEqual([
      ['BRANCH_MOVED', 'blocked'],
    ])

    // The moved branch still points at its new commit, and its record (the way back to it) is kept.
    expect(repo.git('rev-parse', 'refs/heads/harness/bbbb0002')).toBe(moved)
    expect(store.ids().sort()).toEqual(['bbbb0002'])
    expect(existsSync(join(logsDir, 'bbbb0002.log'))).toBe(true)
    // Everything of the others is gone: folders, registrations, branches, checkpoint refs, logs.
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/heads/harness/', 'refs/harness/')).toBe(
      'refs/heads/harness/bbbb0002',
    )
    for (const id of ['aaaa0001', 'cccc0003']) {
      expect(existsSync(join(root, id))).toBe(false)
      expect(existsSync(join(logsDir, `${id}.log`))).toBe(false)
    }
    expect(existsSync(join(logsDir, 'aaaa0001.reserve'))).toBe(false)
    const listed = repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)?.length
    expect(listed).toBe(1)
  })

  test('another worktree whose folder is gone keeps its registration (no global prune then)', async () => {
    const { repo, store, root, plan } = await sessionsFixture(['dddd0004'])
    // Someone's own worktree on a detached HEAD with a commit no branch has; its folder is gone for now.
    const theirs = join(root, '..', 'theirs')
    repo.git('worktree', 'add', '-q', '--detach', theirs)
    repo.git('-C', theirs, 'commit', '-q', '--allow-empty', '-m', 'only here')
    rmSync(theirs, { recursive: true, force: true })

    const items = await plan()
    const results = await executeRemovals(items, { dryRun: false, store, env: repo.env })
    expect(results.map((r) => r.status)).toEqual(['removed'])
    expect(existsSync(join(root, 'dddd0004'))).toBe(false)
    const listed = repo.git('worktree', 'list', '--porcelain')
    expect(listed).toContain(`worktree ${theirs}`)
    expect(listed).not.toContain('dddd0004')
    expect(repo.git('for-each-ref', 'refs/heads/harness/')).toBe('')
  })

  test('a worktree that gains a file after planning is kept, its file intact; the others go', async () => {
    const { repo, store, root, plan } = await sessionsFixture(['eeee0005', 'ffff0006'])
    const items = await plan()
    expect(items.map((item) => item.verdict)).toEqual(Array(2).fill({ action: 'remove', forced: false }))

    // Between planning and removal, someone writes into one finished session's worktree.
    const late = join(root, 'ffff0006', 'late-notes.md')
    writeFileSync(late, 'work written during the cleanup\n')

    const results = await executeRemovals(items, { dryRun: false, store, env: repo.env })
    const byId = new Map(items.map((item, i) => [item.candidate.record?.id, results[i]]))
    expect(byId.get('eeee0005')?.status).toBe('removed')
    const kept = byId.get('ffff0006')
    expect(kept?.status === 'kept' && kept.reasons.map((r) => r.code)).toEqual(['DIRTY'])
    expect(existsSync(late)).toBe(true)
    expect(store.ids()).toEqual(['ffff0006'])
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/heads/harness/')).toBe(
      'refs/heads/harness/ffff0006',
    )
  })
})

describe('removeWorktreeFolder with the layout proven clean', () => {
  async function worktreeWithFolder() {
    const repo = tmpGitRepo()
    const wt = join(repo.dir, '..', 'wt')
    repo.git('worktree', 'add', '-q', '--detach', wt)
    mkdirSync(join(wt, 'src', 'deep'), { recursive: true })
    writeFileSync(join(wt, 'src', 'deep', 'a.js'), 'a\n')
    writeFileSync(join(wt, 'README.md'), 'r\n')
    const entry = (await listWorktrees(repo.dir, { env: repo.env })).find((w) => !w.isMain)
    if (!entry) throw new Error('no worktree listed')
    const layout = { files: ['README.md', 'src/deep/a.js'], dirs: ['src', 'src/deep'] }
    return { wt, entry, layout }
  }

  test('deletes the layout by name, and whatever appeared since as the walk always did', async () => {
    const { wt, entry, layout } = await worktreeWithFolder()
    writeFileSync(join(wt, 'src', 'deep', 'new.txt'), 'new\n')
    writeFileSync(join(wt, 'top.txt'), 'top\n')
    expect(await removeWorktreeFolder(entry, layout)).toBe(true)
    expect(existsSync(wt)).toBe(false)
  })

  test('never follows a link put in place of one of its folders', async () => {
    const { wt, entry, layout } = await worktreeWithFolder()
    const outside = join(wt, '..', 'outside')
    mkdirSync(join(outside, 'deep'), { recursive: true })
    writeFileSync(join(outside, 'deep', 'a.js'), 'keep\n')
    rmSync(join(wt, 'src'), { recursive: true, force: true })
    symlinkSync(outside, join(wt, 'src'))
    expect(await removeWorktreeFolder(entry, layout)).toBe(true)
    expect(existsSync(wt)).toBe(false)
    expect(readFileSync(join(outside, 'deep', 'a.js'), 'utf8')).toBe('keep\n')
  })
})
