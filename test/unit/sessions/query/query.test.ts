import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  getSession,
  type ListFilters,
  listSessions,
  resolveSessionId,
  sessionPath,
} from '../../../../src/sessions/query/query.js'
import type { SessionView } from '../../../../src/sessions/query/reconcile.js'
import { fakeEnv, finishedRecord, runningRecord } from '../../../helpers/fake-env.js'
import { tmpDir } from '../../../helpers/tmp.js'

async function collect(items: AsyncIterable<SessionView>): Promise<SessionView[]> {
  const all: SessionView[] = []
  for await (const item of items) all.push(item)
  return all
}

describe('resolving an id through the port', () => {
  const { store } = fakeEnv({
    records: [finishedRecord('abcd1234'), finishedRecord('abcd5678'), finishedRecord('ffff0000')],
  })

  test('an exact id, and a unique prefix of at least 4 characters', () => {
    expect(resolveSessionId(store, 'abcd1234')).toBe('abcd1234')
    expect(resolveSessionId(store, 'ffff')).toBe('ffff0000')
  })

  test('an ambiguous prefix is a usage error (exit 2) naming every candidate', () => {
    expect(() => resolveSessionId(store, 'abcd')).toThrow(
      expect.objectContaining({
        code: 'AMBIGUOUS_SESSION_ID',
        exitCode: 2,
        message: expect.stringMatching(/abcd1234[\s\S]*abcd5678/),
      }),
    )
  })

  test('no match is not found (exit 3, the list as hint); a prefix too short says how long one must be', () => {
    expect(() => resolveSessionId(store, 'eeee0000')).toThrow(
      expect.objectContaining({
        code: 'SESSION_NOT_FOUND',
        exitCode: 3,
        message: 'session "eeee0000" not found',
        hint: 'run "harness session list" to see sessions',
      }),
    )
    expect(() => resolveSessionId(store, 'fff')).toThrow(
      expect.objectContaining({
        exitCode: 3,
        message: 'session "fff" not found',
        hint: expect.stringContaining('at least 4 characters'),
      }),
    )
  })

  test.each(['../x', 'a/b', 'a..b', '', 'x'.repeat(300)])(
    '%j is not an id: a usage error before any lookup',
    (bad) => {
      expect(() => resolveSessionId(store, bad)).toThrow(
        expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/^invalid session id/) }),
      )
    },
  )
})

describe('show: a RUNNING record is reconciled against the process table', () => {
  test('supervisor and agent verifiably gone: PAUSED "interrupted", written once (rev bumped)', async () => {
    const { env, store, clock } = fakeEnv({
      records: [runningRecord('stale001', { supervisor: [50, 's1'], agent: [51, 'a1'] })],
    })
    const view = await getSession(env, 'stale001')
    expect(view).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupted', rev: 2 })
    expect(view.runs?.[0]?.ended_at).toBe(new Date(clock.ms).toISOString())
    expect(store.writes).toHaveLength(1)
  })

  test('--dry-run shows the reconciliation and writes nothing', async () => {
    const { env, store } = fakeEnv({
      records: [runningRecord('stale001', { supervisor: [50, 's1'], agent: [51, 'a1'] })],
    })
    expect(await getSession(env, 'stale001', true)).toMatchObject({ status: 'PAUSED' })
    expect(store.writes).toHaveLength(0)
    expect(store.get('stale001')?.status).toBe('RUNNING')
  })

  test('a live supervisor: running, untouched', async () => {
    const { env, store, processes } = fakeEnv({
      records: [runningRecord('live0001', { supervisor: [50, 's1'], agent: [51, 'a1'] })],
    })
    processes.alive(50, 's1').alive(51, 'a1')
    expect(await getSession(env, 'live0001')).toMatchObject({ status: 'RUNNING', liveness: 'running' })
    expect(store.writes).toHaveLength(0)
  })

  test('supervisor gone, agent alive: orphaned, not reconciled', async () => {
    const { env, processes } = fakeEnv({
      records: [runningRecord('orph0001', { supervisor: [50, 's1'], agent: [51, 'a1'] })],
    })
    processes.alive(51, 'a1')
    expect(await getSession(env, 'orph0001')).toMatchObject({ status: 'RUNNING', liveness: 'orphaned' })
  })

  test('a pid reused by another process counts as gone (start time differs)', async () => {
    const { env, processes } = fakeEnv({
      records: [runningRecord('reuse001', { supervisor: [50, 's1'], agent: [51, 'a1'] })],
    })
    processes.alive(50, 'other').alive(51, 'other')
    expect(await getSession(env, 'reuse001')).toMatchObject({ status: 'PAUSED' })
  })

  test('recorded on another host: unverified, never reconciled', async () => {
    const record = runningRecord('away0001', { supervisor: [50, 's1'], agent: [51, 'a1'] })
    record.runs = record.runs?.map((run) => ({ ...run, hostname: 'elsewhere' }))
    const { env, store } = fakeEnv({ records: [record] })
    expect(await getSession(env, 'away0001')).toMatchObject({ status: 'RUNNING', liveness: 'unverified' })
    expect(store.writes).toHaveLength(0)
  })

  test('a foreign (unsealed) record is unverified unless both processes are verifiably gone', async () => {
    const { env, processes } = fakeEnv({
      records: [
        { ...runningRecord('frgn0001', { supervisor: [50, 's1'], agent: [51, 'a1'] }), sealed: false },
      ],
    })
    processes.alive(51, 'a1')
    expect(await getSession(env, 'frgn0001')).toMatchObject({ liveness: 'unverified' })
  })
})

describe('list through the port', () => {
  test('newest first, filters on the status after reconciling, limit', async () => {
    const { env } = fakeEnv({
      records: [
        finishedRecord('old00001', { created_at: '2026-09-01T00:00:00.000Z' }),
        finishedRecord('new00001', { created_at: '2026-09-03T00:00:00.000Z', provider: 'codex' }),
        runningRecord('stale001', { supervisor: [50, 's1'] }, { created_at: '2026-09-02T00:00:00.000Z' }),
      ],
    })
    const all = await collect(listSessions(env, { sort: 'created' }))
    expect(all.map((s) => s.id)).toEqual(['new00001', 'stale001', 'old00001'])
    const paused = await collect(listSessions(env, { sort: 'created', status: ['PAUSED'] }))
    expect(paused.map((s) => s.id)).toEqual(['stale001'])
    const codex = await collect(listSessions(env, { sort: 'created', agent: ['codex'], limit: 1 }))
    expect(codex.map((s) => s.id)).toEqual(['new00001'])
  })

  test('newest first with ties broken by id; --sort updated; status, agent and limit filters', async () => {
    const { env } = fakeEnv({
      records: [
        finishedRecord('aaaa0001', {
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-03-01T00:00:00.000Z',
        }),
        finishedRecord('aaaa0002', {
          created_at: '2026-02-01T00:00:00.000Z',
          updated_at: '2026-02-01T00:00:00.000Z',
          status: 'FAILED',
          provider: 'codex',
        }),
        finishedRecord('aaaa0003', {
          created_at: '2026-02-01T00:00:00.000Z',
          updated_at: '2026-01-15T00:00:00.000Z',
          status: 'KILLED',
        }),
      ],
    })
    const ids = async (filters: Partial<ListFilters>) =>
      (await collect(listSessions(env, { sort: 'created', ...filters }))).map((s) => s.id)
    expect(await ids({})).toEqual(['aaaa0002', 'aaaa0003', 'aaaa0001'])
    expect(await ids({ sort: 'updated' })).toEqual(['aaaa0001', 'aaaa0002', 'aaaa0003'])
    expect(await ids({ status: ['FAILED', 'KILLED'] })).toEqual(['aaaa0002', 'aaaa0003'])
    expect(await ids({ agent: ['codex'] })).toEqual(['aaaa0002'])
    expect(await ids({ limit: 1 })).toEqual(['aaaa0002'])
  })

  test('a corrupt record is skipped and reported, the others listed', async () => {
    const { env, store } = fakeEnv({ records: [finishedRecord('good0001')] })
    store.putCorrupt('bad00001')
    expect((await collect(listSessions(env, { sort: 'created' }))).map((s) => s.id)).toEqual(['good0001'])
    expect(store.problems).toEqual([expect.objectContaining({ path: expect.stringContaining('bad00001') })])
  })
})

describe('path through the port', () => {
  test("the session's folder when it exists: inside the project, or the project itself", async () => {
    const root = tmpDir()
    const folder = join(root, '.harness', 'worktrees', 'path0001')
    mkdirSync(folder, { recursive: true })
    const { env } = fakeEnv({
      root,
      records: [
        finishedRecord('path0001', { worktree_dir: folder }),
        finishedRecord('path0002', { worktree_dir: root, is_worktree: false }),
      ],
    })
    expect(await sessionPath(env, 'path0001')).toEqual({ id: 'path0001', path: folder })
    expect(await sessionPath(env, 'path0002')).toEqual({ id: 'path0002', path: root })
  })

  test("a worktree root of the user's config outside the project is harness's too", async () => {
    const top = tmpDir()
    const root = join(top, 'repo')
    const worktree = join(top, 'repo.worktrees', 'wtrt0001')
    mkdirSync(worktree, { recursive: true })
    const config = join(top, 'config')
    mkdirSync(join(config, 'harness'), { recursive: true })
    writeFileSync(
      join(config, 'harness', 'config.json'),
      JSON.stringify({ worktree: { root: '../repo.worktrees' } }),
    )
    const records = [finishedRecord('wtrt0001', { worktree_dir: worktree })]
    const allowed = fakeEnv({ root, env: { XDG_CONFIG_HOME: config }, records })
    expect(await sessionPath(allowed.env, 'wtrt0001')).toEqual({ id: 'wtrt0001', path: worktree })
    const other = fakeEnv({ root, env: { XDG_CONFIG_HOME: tmpDir() }, records })
    await expect(sessionPath(other.env, 'wtrt0001')).rejects.toMatchObject({ code: 'PATH_REFUSED' })
  })

  test('only a verified, absolute folder of the project is given to a shell (docs/security.md, "hcd")', async () => {
    const root = tmpDir()
    const outside = tmpDir()
    mkdirSync(join(root, '-'))
    const { env } = fakeEnv({
      root,
      env: { HOME: tmpDir() },
      records: [
        { ...finishedRecord('ship0001', { worktree_dir: join(root) }), sealed: false },
        finishedRecord('away0001', { worktree_dir: outside }),
        finishedRecord('dash0001', { worktree_dir: '-' }),
      ],
    })
    await expect(sessionPath(env, 'ship0001')).rejects.toMatchObject({ code: 'FOREIGN', exitCode: 4 })
    await expect(sessionPath(env, 'away0001')).rejects.toMatchObject({
      code: 'PATH_REFUSED',
      exitCode: 4,
      message: expect.stringContaining('outside the project'),
    })
    await expect(sessionPath(env, 'dash0001')).rejects.toMatchObject({
      code: 'PATH_REFUSED',
      message: expect.stringContaining('not an absolute path'),
    })
  })

  test('a folder that is gone is WORKTREE_GONE, with the way back through its branch', async () => {
    const { env } = fakeEnv({
      records: [
        finishedRecord('gone0001', {
          worktree_dir: '/nonexistent/wt',
          is_worktree: true,
          git_branch: 'harness/gone0001',
        }),
        finishedRecord('gone0002', { worktree_dir: '/nonexistent/wt', is_worktree: false }),
      ],
    })
    await expect(sessionPath(env, 'gone0001')).rejects.toMatchObject({
      code: 'WORKTREE_GONE',
      exitCode: 4,
      hint: expect.stringContaining('"harness session resume gone0001" recreates it'),
    })
    await expect(sessionPath(env, 'gone0002')).rejects.toMatchObject({
      hint: expect.stringContaining('cannot recreate'),
    })
  })
})
