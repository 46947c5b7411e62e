import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HarnessError } from '../../../../src/errors.js'
import type { Checkpoint, SessionRecord } from '../../../../src/sessions/record/schema.js'
import { verifiedSession } from '../../../../src/sessions/record/seal.js'
import { SessionStore } from '../../../../src/sessions/record/store.js'
import {
  MAX_INTERVAL_CHECKPOINTS,
  restoreSessionCheckpoint,
  takeCheckpoint,
} from '../../../../src/sessions/work/checkpoints.js'
import { sessionRecord, testSealer } from '../../../fixtures/records.js'
import { sessionWorktree, type TmpRepo, tmpGitRepo } from '../../../helpers/tmp.js'

interface Fixture {
  repo: TmpRepo
  store: SessionStore
  id: string
  wt: string
  git: (...args: string[]) => string
  write: (path: string, content: string) => void
}

/** A repository with a session whose worktree is a real `git worktree` on harness/<id>. */
async function sessionFixture(extra: Partial<SessionRecord> = {}): Promise<Fixture> {
  const repo = tmpGitRepo()
  repo.write('.gitignore', 'ignored/\n*.log\n')
  repo.write('src/a.txt', 'a1\n')
  repo.write('src/run.sh', '#!/bin/sh\necho hi\n')
  chmodSync(join(repo.dir, 'src/run.sh'), 0o755)
  repo.write('gone-later.txt', 'present at first\n')
  repo.git('add', '-A')
  repo.git('commit', '-q', '-m', 'base')
  const id = 'ckpt0001'
  const wt = sessionWorktree(repo, id)
  const base = repo.git('rev-parse', 'HEAD')
  const store = new SessionStore(join(repo.dir, '.harness', 'sessions'), { sealer: testSealer() })
  store.ensureDir()
  await store.create(
    sessionRecord(id, {
      worktree_dir: wt,
      base_dir: repo.dir,
      base_commit: base,
      checkpoints: [],
      ...extra,
    }),
  )
  const { execFileSync } = await import('node:child_process')
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: wt, env: repo.env, encoding: 'utf8' }).trim()
  const write = (path: string, content: string) => {
    mkdirSync(join(wt, path, '..'), { recursive: true })
    writeFileSync(join(wt, path), content)
  }
  return { repo, store, id, wt, git, write }
}

/** Every file under `dir` but .git: path, type, mode and content hash. */
function filesOf(dir: string, skip: (rel: string) => boolean = () => false): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const full = join(d, name)
      const rel = relative(dir, full)
      if (name === '.git' || skip(rel)) continue
      const stat = lstatSync(full)
      if (stat.isDirectory()) walk(full)
      else
        out.push(
          `${rel} ${stat.mode.toString(8)} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`,
        )
    }
  }
  walk(dir)
  return out
}

/** Branch, index, stash, HEAD and files of a worktree: what a checkpoint must leave exactly as it was. */
function userState(f: Fixture): string {
  const index = f.git('rev-parse', '--path-format=absolute', '--git-path', 'index')
  return [
    f.git('for-each-ref', 'refs/heads', 'refs/stash'),
    f.git('symbolic-ref', 'HEAD'),
    createHash('sha256').update(readFileSync(index)).digest('hex'),
    ...filesOf(f.wt),
  ].join('\n')
}

async function rejection(promise: Promise<unknown>): Promise<HarnessError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof HarnessError)) throw new Error(`expected a HarnessError, got ${String(error)}`)
  return error
}

describe('checkpoints', () => {
  test('a checkpoint stores the complete state and leaves branch, index, stash and files byte-identical', async () => {
    const f = await sessionFixture()
    f.write('stashed.txt', 'stash me\n')
    f.git('add', 'stashed.txt')
    f.git('stash', 'push', '-q', '-m', 'user stash')
    f.write('src/a.txt', 'a2 staged\n')
    f.git('add', 'src/a.txt')
    f.write('src/a.txt', 'a3 unstaged on top\n')
    f.write('new/untracked.txt', 'new\n')
    f.write('debug.log', 'ignored\n')
    rmSync(join(f.wt, 'gone-later.txt'))
    const before = userState(f)
    const { checkpoint } = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'manual',
      message: 'half way',
    })
    expect(userState(f)).toBe(before)
    expect(checkpoint).toMatchObject({
      n: 0,
      ref: `refs/harness/${f.id}/checkpoints/0`,
      head: f.git('rev-parse', 'HEAD'),
      message: 'half way',
      trigger: 'manual',
      files_changed: 3, // src/a.txt, new/untracked.txt, gone-later.txt
    })
    expect(f.git('rev-parse', checkpoint?.ref ?? '')).toBe(checkpoint?.commit)
    expect(f.git('rev-parse', `${checkpoint?.commit}^1`)).toBe(f.git('rev-parse', 'HEAD'))
    const tree = f.git('ls-tree', '-r', '--name-only', checkpoint?.commit ?? '').split('\n')
    expect(tree).toContain('new/untracked.txt')
    expect(tree).not.toContain('debug.log')
    expect(tree).not.toContain('gone-later.txt')
    expect(f.git('show', `${checkpoint?.commit}:src/a.txt`)).toBe('a3 unstaged on top')
    const record = f.store.get(f.id)
    expect(record?.checkpoints).toHaveLength(1)
    expect(record?.checkpoints?.[0]).toEqual(checkpoint)
  })

  test('consecutive numbers, files_changed against the previous one, nothing when nothing changed', async () => {
    const f = await sessionFixture()
    const none = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'interval',
      onlyIfChanged: true,
    })
    expect(none.checkpoint).toBeNull()
    f.write('one.txt', '1\n')
    const first = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'interval',
      onlyIfChanged: true,
    })
    expect(first.checkpoint).toMatchObject({ n: 0, files_changed: 1, trigger: 'interval' })
    const again = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'interval',
      onlyIfChanged: true,
    })
    expect(again.checkpoint).toBeNull()
    f.write('two.txt', '2\n')
    f.write('src/a.txt', 'changed\n')
    const second = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'run-end',
      onlyIfChanged: true,
    })
    expect(second.checkpoint).toMatchObject({ n: 1, files_changed: 2, trigger: 'run-end' })
    // A commit by the agent moves HEAD: that is a change even though the files are the same.
    f.git('add', '-A')
    f.git('commit', '-q', '-m', 'agent commit')
    const third = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'interval',
      onlyIfChanged: true,
    })
    expect(third.checkpoint).toMatchObject({ n: 2, files_changed: 0, head: f.git('rev-parse', 'HEAD') })
    const manual = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'manual',
    })
    expect(manual.checkpoint?.n).toBe(3)
    expect(f.store.get(f.id)?.checkpoints?.map((c) => c.n)).toEqual([0, 1, 2, 3])
  })

  test('past MAX_INTERVAL_CHECKPOINTS an interval checkpoint folds into the newest: n consecutive, every ref valid', async () => {
    const f = await sessionFixture()
    const base = f.git('rev-parse', 'HEAD')
    // A session that has taken its cap of interval checkpoints (their refs made in one transaction).
    const full: Checkpoint[] = Array.from({ length: MAX_INTERVAL_CHECKPOINTS }, (_, n) => ({
      n,
      ref: `refs/harness/${f.id}/checkpoints/${n}`,
      commit: base,
      head: base,
      message: `interval checkpoint ${n}`,
      created_at: new Date(Date.UTC(2026, 0, 1, 0, 2 * n)).toISOString(),
      trigger: 'interval',
      files_changed: 0,
      tokens_used: null,
    }))
    execFileSync('git', ['update-ref', '--stdin'], {
      cwd: f.repo.dir,
      env: f.repo.env,
      input: full.map((c) => `create ${c.ref} ${c.commit}\n`).join(''),
    })
    await f.store.update(f.id, (r) => ({ ...r, checkpoints: full }))
    const take = (trigger: 'interval' | 'manual') =>
      takeCheckpoint(f.store, f.id, {
        env: f.repo.env,
        projectRoot: f.repo.dir,
        now: new Date(),
        trigger,
        onlyIfChanged: trigger === 'interval',
      })
    const last = MAX_INTERVAL_CHECKPOINTS - 1
    f.write('one.txt', '1\n')
    expect((await take('interval')).checkpoint).toMatchObject({ n: last, folded: 1, files_changed: 1 })
    f.write('two.txt', '2\n')
    const again = (await take('interval')).checkpoint
    expect(again).toMatchObject({ n: last, folded: 2, files_changed: 2 })
    // A manual one is always added; the next interval one after it is its own, then folds again.
    expect((await take('manual')).checkpoint?.n).toBe(last + 1)
    f.write('three.txt', '3\n')
    expect((await take('interval')).checkpoint).toMatchObject({ n: last + 2 })
    f.write('four.txt', '4\n')
    expect((await take('interval')).checkpoint).toMatchObject({ n: last + 2, folded: 1 })

    const record = f.store.get(f.id) as SessionRecord
    const checkpoints = record.checkpoints ?? []
    expect(checkpoints.map((c) => c.n)).toEqual(Array.from({ length: last + 3 }, (_, n) => n))
    expect(f.git('rev-parse', `refs/harness/${f.id}/checkpoints/${last}`)).toBe(again?.commit)
    const { checkIntegrity } = await import('../../../../src/sessions/control/integrity.js')
    expect((await checkIntegrity([record], f.repo.env)).get(f.id) ?? []).toEqual([])
    // Far under what a record may be, at the cap and past it.
    expect(Buffer.byteLength(JSON.stringify(record, null, 2))).toBeLessThan(512 * 1024)
  })

  test('concurrent checkpoints get distinct consecutive numbers', async () => {
    const f = await sessionFixture()
    f.write('x.txt', 'x\n')
    const taken = await Promise.all(
      [0, 1, 2, 3].map(() =>
        takeCheckpoint(f.store, f.id, {
          env: f.repo.env,
          projectRoot: f.repo.dir,
          now: new Date(),
          trigger: 'manual',
        }),
      ),
    )
    expect(taken.map((t) => t.checkpoint?.n).sort()).toEqual([0, 1, 2, 3])
    const refs = f.git('for-each-ref', '--format=%(refname)', `refs/harness/${f.id}/checkpoints/`)
    expect(refs.split('\n')).toHaveLength(4)
  })

  test('a checkpoint taken while files are being written leaves them as the writer made them', {
    tags: ['process'],
  }, async () => {
    const f = await sessionFixture()
    const { spawn } = await import('node:child_process')
    const writer = spawn(
      process.execPath,
      [
        '-e',
        `const fs=require('fs');let i=0;const t=setInterval(()=>{fs.writeFileSync('w'+(i%5)+'.txt',String(i));if(++i>=60){clearInterval(t)}},5)`,
      ],
      { cwd: f.wt, stdio: 'ignore' },
    )
    const done = new Promise((resolve) => writer.on('exit', resolve))
    const head = f.git('rev-parse', 'HEAD')
    const index = f.git('rev-parse', '--path-format=absolute', '--git-path', 'index')
    const indexHash = createHash('sha256').update(readFileSync(index)).digest('hex')
    for (let i = 0; i < 3; i++)
      await takeCheckpoint(f.store, f.id, {
        env: f.repo.env,
        projectRoot: f.repo.dir,
        now: new Date(),
        trigger: 'manual',
      })
    await done
    expect(f.git('rev-parse', 'HEAD')).toBe(head)
    expect(createHash('sha256').update(readFileSync(index)).digest('hex')).toBe(indexHash)
    expect(f.git('status', '--porcelain')).toBe(
      ['?? w0.txt', '?? w1.txt', '?? w2.txt', '?? w3.txt', '?? w4.txt'].join('\n'),
    )
    for (let i = 0; i < 5; i++) expect(readFileSync(join(f.wt, `w${i}.txt`), 'utf8')).toBe(String(55 + i))
  })
})

describe('restore', () => {
  test('brings back exact bytes, modes and deletions; untracked stays untracked; ignored untouched; branch at head', async () => {
    const f = await sessionFixture()
    // State A: staged edit, unstaged edit, new untracked file, a deletion, a mode change, an ignored file.
    f.write('src/a.txt', 'a2 staged\n')
    f.git('add', 'src/a.txt')
    f.write('notes/untracked.md', 'keep me untracked\n')
    rmSync(join(f.wt, 'gone-later.txt'))
    chmodSync(join(f.wt, 'src/run.sh'), 0o644)
    f.write('ignored/cache.bin', 'ignored v1\n')
    const headA = f.git('rev-parse', 'HEAD')
    const statusA = f.git('status', '--porcelain')
    const filesA = filesOf(f.wt, (rel) => rel.startsWith('ignored'))
    const { checkpoint } = await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'manual',
      message: 'A',
    })
    // Then: a commit, more edits, new files (tracked and untracked), deletions, the ignored file changes.
    f.write('committed-later.txt', 'c\n')
    f.git('add', '-A')
    f.git('commit', '-q', '-m', 'later')
    f.write('src/a.txt', 'much later\n')
    f.write('brand/new.txt', 'new\n')
    rmSync(join(f.wt, 'notes/untracked.md'))
    rmSync(join(f.wt, 'README.md'))
    chmodSync(join(f.wt, 'src/run.sh'), 0o755)
    f.write('ignored/cache.bin', 'ignored v2\n')
    const filesB = filesOf(f.wt, (rel) => rel.startsWith('ignored'))
    const headB = f.git('rev-parse', 'HEAD')
    const statusB = f.git('status', '--porcelain')

    const session = f.store.get(f.id) as SessionRecord
    const outcome = await restoreSessionCheckpoint(
      f.store,
      verifiedSession(session, 'restores'),
      String(checkpoint?.n),
      {
        env: f.repo.env,
        projectRoot: f.repo.dir,
        now: new Date(),
      },
    )
    expect(filesOf(f.wt, (rel) => rel.startsWith('ignored'))).toEqual(filesA)
    expect(readFileSync(join(f.wt, 'ignored/cache.bin'), 'utf8')).toBe('ignored v2\n')
    expect(f.git('rev-parse', 'HEAD')).toBe(headA)
    expect(f.git('symbolic-ref', 'HEAD')).toBe(`refs/heads/harness/${f.id}`)
    expect(f.git('status', '--porcelain')).toBe(statusA)
    expect(outcome.before).toMatchObject({ n: 1, trigger: 'before-restore' })

    // The before-restore checkpoint makes the restore undoable.
    const again = f.store.get(f.id) as SessionRecord
    await restoreSessionCheckpoint(f.store, verifiedSession(again, 'restores'), 1, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
    })
    expect(filesOf(f.wt, (rel) => rel.startsWith('ignored'))).toEqual(filesB)
    expect(f.git('rev-parse', 'HEAD')).toBe(headB)
    expect(f.git('status', '--porcelain')).toBe(statusB)
    expect(f.store.get(f.id)?.checkpoints?.map((c) => c.trigger)).toEqual([
      'manual',
      'before-restore',
      'before-restore',
    ])
  })

  test('a RUNNING session is refused with exit 4 and nothing changes', async () => {
    const f = await sessionFixture()
    f.write('x.txt', 'x\n')
    await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'manual',
    })
    await f.store.update(f.id, (r) => ({ ...r, status: 'RUNNING' }))
    f.write('y.txt', 'y\n')
    const before = userState(f)
    const error = await rejection(
      restoreSessionCheckpoint(f.store, verifiedSession(f.store.get(f.id) as SessionRecord, 'restores'), 0, {
        env: f.repo.env,
        projectRoot: f.repo.dir,
        now: new Date(),
      }),
    )
    expect(error.exitCode).toBe(4)
    expect(error.code).toBe('SESSION_RUNNING')
    expect(userState(f)).toBe(before)
    expect(f.store.get(f.id)?.checkpoints).toHaveLength(1)
  })

  test('an unknown checkpoint number is a usage error', async () => {
    const f = await sessionFixture()
    const session = f.store.get(f.id) as SessionRecord
    expect(
      (
        await rejection(
          restoreSessionCheckpoint(f.store, verifiedSession(session, 'restores'), '3', {
            env: f.repo.env,
            projectRoot: f.repo.dir,
            now: new Date(),
          }),
        )
      ).exitCode,
    ).toBe(2)
    expect(
      (
        await rejection(
          restoreSessionCheckpoint(f.store, verifiedSession(session, 'restores'), '-1', {
            env: f.repo.env,
            projectRoot: f.repo.dir,
            now: new Date(),
          }),
        )
      ).exitCode,
    ).toBe(2)
  })
})

describe('foreign records', () => {
  test('a record harness did not seal is never checkpointed or restored (exit 4, FOREIGN)', async () => {
    const f = await sessionFixture()
    f.write('x.txt', 'x\n')
    await takeCheckpoint(f.store, f.id, {
      env: f.repo.env,
      projectRoot: f.repo.dir,
      now: new Date(),
      trigger: 'manual',
    })
    const path = f.store.recordPath(f.id)
    const record = JSON.parse(readFileSync(path, 'utf8'))
    record.seal = 'forged'
    writeFileSync(path, JSON.stringify(record))
    const refs = f.git('for-each-ref')
    const before = userState(f)
    expect(
      (
        await rejection(
          takeCheckpoint(f.store, f.id, {
            env: f.repo.env,
            projectRoot: f.repo.dir,
            now: new Date(),
            trigger: 'manual',
          }),
        )
      ).code,
    ).toBe('FOREIGN')
    const foreign = f.store.get(f.id) as SessionRecord
    // restoreSessionCheckpoint takes a verified session only: the foreign record never gets that far.
    expect(() => verifiedSession(foreign, 'restores its worktree')).toThrow(
      expect.objectContaining({ code: 'FOREIGN', exitCode: 4 }),
    )
    expect(f.git('for-each-ref')).toBe(refs)
    expect(userState(f)).toBe(before)
  })
})
