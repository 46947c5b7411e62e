import { execFileSync } from 'node:child_process'
import { existsSync, lutimesSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { isInsideRoots } from '../../../../src/config.js'
import { removeWorktreeFolder } from '../../../../src/git/removal.js'
import { listWorktrees } from '../../../../src/git/worktree-list.js'
import { SessionStore } from '../../../../src/sessions/record/store.js'
import { decideRemoval } from '../../../../src/sessions/removal/decision.js'
import { executeRemovals } from '../../../../src/sessions/removal/executor.js'
import { RepoCache } from '../../../../src/sessions/removal/repo-view.js'
import { planSession, sessionCandidate } from '../../../../src/sessions/removal/session-plan.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { tmpGitRepo } from '../../../helpers/tmp.js'

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
  const plan = async (deferContent = false) =>
    Promise.all(
      store.list().map(async (record) => {
        const planned = await planSession(record, { ...where, deferContent })
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

/**
 * Dates a worktree's files a few seconds back and refreshes its index, so that no entry is racily clean and
 * the worktree can be proven clean in process (as after any `git status` a second or more after checkout).
 */
function settle(repo: ReturnType<typeof tmpGitRepo>, wt: string): void {
  const past = Date.now() / 1000 - 5
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: wt, env: repo.env, encoding: 'utf8' })
  for (const file of files.split('\0').filter(Boolean)) lutimesSync(join(wt, file), past, past)
  execFileSync('git', ['update-index', '-q', '--refresh'], { cwd: wt, env: repo.env })
}

describe('batched removal without a look at planning (cleanup without --force)', () => {
  test("the check under the lock keeps dirty and nested worktrees in planning's words, releasing them at once; the rest go as each is proven", async () => {
    const ids = Array.from({ length: 12 }, (_, i) => `a${String(i).padStart(7, '0')}`)
    const { repo, store, root, plan } = await sessionsFixture(ids)
    for (const id of ids) settle(repo, join(root, id))
    const [dirty, nested, shared] = ids.map((id) => join(root, id))
    if (!dirty || !nested || !shared) throw new Error('fixture')
    writeFileSync(join(dirty, 'notes.txt'), 'mine\n')
    mkdirSync(join(nested, 'inner'))
    writeFileSync(join(nested, 'inner', 'p.txt'), 'precious\n')
    for (const args of [
      ['init', '-q'],
      ['add', 'p.txt'],
      ['commit', '-qm', 'work'],
    ]) {
      execFileSync('git', args, { cwd: join(nested, 'inner'), env: repo.env })
    }
    // A second record naming one worktree (made by hand, no branch of its own): both are told it is clean.
    // An empty folder in it is not proven clean in process, and git's answer for its chunk (which holds the
    // dirty one) is not "all clean": it is inspected on its own, once for both records.
    mkdirSync(join(shared, 'empty-folder'))
    await store.create(
      sessionRecord('b0000001', {
        worktree_dir: shared,
        base_dir: repo.dir,
        git_branch: null,
        is_worktree: true,
        branch_created: false,
        checkpoints: [],
      }),
    )
    const items = await plan(true)
    expect(items.map((item) => [item.verdict.action, item.candidate.contentUnchecked])).toEqual(
      Array(13).fill(['remove', true]),
    )

    // Watches the lock files while the batch runs: a kept session's lock goes before the batch's git work.
    const lock = (id: string) => join(repo.dir, '.harness', 'sessions', `${id}.lock`)
    let done = false
    let keptReleasedEarly = false
    const watch = () => {
      if (done) return
      // Before the registrations are pruned, with the other sessions still locked.
      const registered = existsSync(join(repo.dir, '.git', 'worktrees', ids[11] as string))
      if (registered && existsSync(lock(ids[11] as string)) && !existsSync(lock(ids[0] as string))) {
        keptReleasedEarly = true
      }
      setImmediate(watch)
    }
    setImmediate(watch)
    const results = await executeRemovals(items, { dryRun: false, store, env: repo.env }).finally(() => {
      done = true
    })
    const byId = new Map(items.map((item, i) => [item.candidate.record?.id, results[i]]))
    const reasons = (id: string) => {
      const result = byId.get(id)
      return result?.status === 'kept' ? result.reasons : result?.status
    }
    expect(reasons(ids[0] as string)).toEqual([
      { code: 'DIRTY', kind: 'unsafe', message: `worktree ${dirty} has 1 uncommitted or untracked file` },
    ])
    expect(
      (reasons(ids[1] as string) as { code: string; kind: string }[]).map((r) => [r.code, r.kind]),
    ).toEqual([
      ['NESTED_REPO', 'blocked'],
      ['DIRTY', 'unsafe'],
    ])
    expect(keptReleasedEarly).toBe(true)
    for (const id of [...ids.slice(2), 'b0000001']) {
      const result = byId.get(id)
      // Each removed session's own worktree step ran (two records naming one worktree: both of them).
      expect(
        result?.status === 'removed' && result.done.map((step) => step.kind).includes('worktree'),
        id,
      ).toBe(true)
    }
    expect(store.ids().sort()).toEqual([ids[0], ids[1]])
    expect(readFileSync(join(dirty, 'notes.txt'), 'utf8')).toBe('mine\n')
    expect(readFileSync(join(nested, 'inner', 'p.txt'), 'utf8')).toBe('precious\n')
    for (const id of ids.slice(2)) expect(existsSync(join(root, id)), id).toBe(false)
    expect(repo.git('for-each-ref', '--format=%(refname)', 'refs/heads/harness/').split('\n').sort()).toEqual(
      [`refs/heads/harness/${ids[0]}`, `refs/heads/harness/${ids[1]}`],
    )
  })

  test('a worktree that lost its .git after planning is left alone (NOT_A_WORKTREE), as planning would say', async () => {
    const { root, store, repo, plan } = await sessionsFixture(['c0000001'])
    const items = await plan(true)
    const wt = join(root, 'c0000001')
    rmSync(join(wt, '.git'))
    const [result] = await executeRemovals(items, { dryRun: false, store, env: repo.env })
    expect(result?.status === 'kept' && result.reasons).toEqual([
      { code: 'NOT_A_WORKTREE', kind: 'blocked', message: `${wt} has lost its .git file: left alone` },
    ])
    expect(existsSync(join(wt, 'README.md'))).toBe(true)
    expect(store.ids()).toEqual(['c0000001'])
  })
  test("a link planted at a record's worktree folder is not followed: not an empty folder, left alone", async () => {
    const { root, store, repo, plan } = await sessionsFixture(['c0000002'])
    const wt = join(root, 'c0000002')
    repo.git('worktree', 'remove', wt)
    // The record's path now names a link to an empty folder under the root (contained, so only the link tells).
    const theirs = join(root, 'someone-elses')
    mkdirSync(theirs)
    symlinkSync(theirs, wt)
    const [item] = await plan()
    expect(item?.verdict.action).toBe('keep')
    expect(item?.candidate.reasons).toEqual([
      {
        code: 'NOT_A_WORKTREE',
        kind: 'blocked',
        message: `${wt} is not a worktree of ${repo.dir}: left alone`,
      },
    ])
    await executeRemovals(item ? [item] : [], { dryRun: false, store, env: repo.env })
    expect(existsSync(theirs)).toBe(true)
    expect(store.ids()).toEqual(['c0000002'])
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
