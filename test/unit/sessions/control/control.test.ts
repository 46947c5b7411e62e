import { describe, expect, test } from 'vitest'
import { recoverSessions, scanRecoverable } from '../../../../src/sessions/control/recover.js'
import { stopSession } from '../../../../src/sessions/control/stop.js'
import { waitExitCode, waitForSession } from '../../../../src/sessions/control/wait.js'
import { FakeClock, fakeEnv, finishedRecord, runningRecord } from '../../../helpers/fake-env.js'

const live = (id: string) => runningRecord(id, { supervisor: [50, 's1'], agent: [51, 'a1'] })

describe('wait: decided by record changes and the clock', () => {
  test('returns the record once a write ends the run', async () => {
    const { env, store, processes } = fakeEnv({ records: [live('wait0001')] })
    processes.alive(50, 's1').alive(51, 'a1')
    const waiting = waitForSession(env, 'wait')
    await new Promise((resolve) => setTimeout(resolve, 30))
    await store.update('wait0001', (r) => ({ ...r, status: 'COMPLETED', exit_code: 0 }))
    const done = await waiting
    expect(done).toMatchObject({ id: 'wait0001', status: 'COMPLETED' })
    expect(waitExitCode(done)).toBe(0)
  })

  test('times out by the clock (WAIT_TIMEOUT, exit 124) while the session runs on', async () => {
    const { env, processes } = fakeEnv({ records: [live('wait0001')], clock: new FakeClock(0, 400) })
    processes.alive(50, 's1')
    await expect(waitForSession(env, 'wait0001', 1000)).rejects.toMatchObject({
      code: 'WAIT_TIMEOUT',
      exitCode: 124,
    })
  })

  test('a stale session is reconciled on the way and ends the wait (PAUSED: exit 4)', async () => {
    const { env } = fakeEnv({ records: [live('wait0001')] })
    const done = await waitForSession(env, 'wait0001', 5000)
    expect(done).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupted' })
    expect(waitExitCode(done)).toBe(4)
  })

  test('a foreign record is refused at once, RUNNING or finished (FOREIGN, exit 4): its status is a claim', async () => {
    const shipped = { ...live('ship0001'), sealed: false }
    const done = { ...finishedRecord('ship0002', { exit_code: 0 }), sealed: false }
    const { env, processes } = fakeEnv({ records: [shipped, done], clock: new FakeClock(0, 1) })
    // Its processes even look alive: what the record names is never taken as harness's own.
    processes.alive(50, 's1').alive(51, 'a1')
    for (const id of ['ship0001', 'ship0002']) {
      await expect(waitForSession(env, id)).rejects.toMatchObject({
        code: 'FOREIGN',
        exitCode: 4,
        message: expect.stringContaining('never waits on it'),
        hint: expect.stringContaining(`harness session adopt ${id}`),
      })
    }
  })

  test('an unverified RUNNING record (another host) is refused at once (SESSION_UNVERIFIED, exit 4)', async () => {
    const away = live('away0001')
    away.runs = away.runs?.map((run) => ({ ...run, hostname: 'elsewhere' }))
    const { env } = fakeEnv({ records: [away], clock: new FakeClock(0, 1) })
    await expect(waitForSession(env, 'away0001')).rejects.toMatchObject({
      code: 'SESSION_UNVERIFIED',
      exitCode: 4,
      hint: expect.stringContaining('harness session recover away0001'),
    })
  })

  test('PAUSED: 6 at the budget, 124 at a --timeout, 128+n for a signal interrupt, else 4 (SPEC §8)', () => {
    const paused = (stop_reason: string, exit_code: number | null = null) =>
      waitExitCode(finishedRecord('p0000001', { status: 'PAUSED', stop_reason, exit_code }))
    expect(paused('budget')).toBe(6)
    expect(paused('timeout', 124)).toBe(124)
    expect(paused('interrupt', 130)).toBe(130)
    expect(paused('hangup', 129)).toBe(129)
    expect(paused('terminated', 143)).toBe(143)
    // A record that kept no code (written by hand, or cut short) says the same through its reason.
    expect([paused('timeout'), paused('interrupt'), paused('hangup'), paused('terminated')]).toEqual([
      124, 130, 129, 143,
    ])
    expect([paused('paused'), paused('interrupted'), paused('recovered')]).toEqual([4, 4, 4])
  })

  test('a finished session: at once, with its exit code', async () => {
    const { env } = fakeEnv({ records: [finishedRecord('done0001', { status: 'FAILED', exit_code: 3 })] })
    expect(waitExitCode(await waitForSession(env, 'done'))).toBe(3)
  })
})

describe('recover', () => {
  /** stale001: all gone; orph0001: its agent alive; runs0001: its supervisor alive; away0001: another host. */
  const made = () => {
    const away = runningRecord('away0001', { supervisor: [56, 's'], agent: [57, 'a'] })
    away.runs = away.runs?.map((run) => ({ ...run, hostname: 'elsewhere' }))
    const fake = fakeEnv({
      records: [
        runningRecord('stale001', { supervisor: [50, 's'], agent: [51, 'a'] }),
        runningRecord('orph0001', { supervisor: [52, 's'], agent: [53, 'a'] }),
        runningRecord('runs0001', { supervisor: [54, 's'], agent: [55, 'a'] }),
        away,
        finishedRecord('done0001'),
      ],
    })
    fake.processes.alive(53, 'a').alive(54, 's').alive(55, 'a')
    return fake
  }

  test('--scan lists stale, orphaned, unverified and corrupt, touches nothing', async () => {
    const { env, store } = made()
    store.putCorrupt('bad00001')
    const scan = await scanRecoverable(env)
    expect(scan.map((c) => [c.id, c.liveness ?? null, !!c.corrupt])).toEqual([
      ['away0001', 'unverified', false],
      ['bad00001', null, true],
      ['orph0001', 'orphaned', false],
      ['stale001', 'stale', false],
    ])
    expect(store.writes).toHaveLength(0)
  })

  test('<id>: a stale one is PAUSED "interrupted", an unverified one PAUSED "recovered" on the user\'s word', async () => {
    const { env } = made()
    expect((await recoverSessions(env, 'stale001', false)).recovered[0]).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'interrupted',
    })
    expect((await recoverSessions(env, 'away0001', false)).recovered[0]).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'recovered',
    })
  })

  test('<id>: an orphaned or running one is refused (SESSION_ALIVE); a finished one has nothing to recover', async () => {
    const { env, store } = made()
    await expect(recoverSessions(env, 'orph0001', false)).rejects.toMatchObject({
      code: 'SESSION_ALIVE',
      message: expect.stringContaining('orphaned'),
    })
    await expect(recoverSessions(env, 'runs0001', false)).rejects.toMatchObject({ code: 'SESSION_ALIVE' })
    await expect(recoverSessions(env, 'done0001', false)).rejects.toMatchObject({
      message: expect.stringContaining('nothing to recover'),
    })
    expect(store.writes).toHaveLength(0)
  })

  test('--all: recovers what it can, skips the living, quarantines the corrupt', async () => {
    const { env, store } = made()
    store.putCorrupt('bad00001')
    const result = await recoverSessions(env, undefined, true)
    expect(result.recovered.map((r) => r.id).sort()).toEqual(['away0001', 'stale001'])
    expect(result.skipped).toEqual([expect.objectContaining({ id: 'orph0001', liveness: 'orphaned' })])
    expect(result.quarantined).toEqual([
      expect.objectContaining({ moved_to: '/fake/project/.harness/corrupt/bad00001.json' }),
    ])
    expect(store.corruptRecords()).toEqual([])
    expect(store.get('runs0001')?.status).toBe('RUNNING')
  })
})

describe('kill and pause: which process is signalled, and when none is', () => {
  test('a live supervisor gets SIGTERM and records the outcome: produced, via the supervisor', async () => {
    const { env, store, processes } = fakeEnv({ records: [live('kill0001')] })
    processes.alive(51, 'a1')
    processes.alive(50, 's1', () => {
      processes.exit(51)
      void store.update('kill0001', (r) => ({ ...r, status: 'KILLED' })).then(() => processes.exit(50))
    })
    const result = await stopSession(env, 'kill', 'kill', 1000)
    expect(processes.signals).toEqual([{ pid: 50, signal: 'SIGTERM' }])
    expect(processes.treeStops).toEqual([])
    expect(result).toMatchObject({ produced: true, via: 'supervisor', record: { status: 'KILLED' } })
    expect(result.record.stop_request).toMatchObject({ action: 'kill', by_pid: processes.selfPid })
  })

  test('the supervisor gone, the agent alive: its tree is stopped directly and the outcome recorded', async () => {
    const { env, processes } = fakeEnv({ records: [live('paus0001')] })
    processes.alive(51, 'a1')
    const result = await stopSession(env, 'paus0001', 'pause', 2500)
    expect(processes.treeStops).toEqual([{ pid: 51, graceMs: 2500 }])
    expect(result).toMatchObject({ via: 'direct', produced: true, record: { status: 'PAUSED' } })
  })

  test('a supervisor that is this very process is never signalled', async () => {
    const { env, processes } = fakeEnv({ records: [runningRecord('self0001', { supervisor: [1000, 's'] })] })
    processes.alive(1000, 's')
    await expect(stopSession(env, 'self0001', 'kill', 100)).rejects.toThrow(/cannot stop itself/)
    expect(processes.signals).toEqual([])
  })

  test('nothing is signalled for an unverified, a foreign or a finished session', async () => {
    const away = live('away0001')
    away.runs = away.runs?.map((run) => ({ ...run, hostname: 'elsewhere' }))
    const { env, processes, store } = fakeEnv({
      records: [away, { ...live('frgn0001'), sealed: false }, finishedRecord('done0001')],
    })
    processes.alive(50, 's1').alive(51, 'a1')
    await expect(stopSession(env, 'away0001', 'kill', 100)).rejects.toMatchObject({
      code: 'SESSION_UNVERIFIED',
    })
    await expect(stopSession(env, 'frgn0001', 'kill', 100)).rejects.toMatchObject({
      code: 'SESSION_UNVERIFIED',
    })
    await expect(stopSession(env, 'done0001', 'pause', 100)).rejects.toMatchObject({
      code: 'SESSION_NOT_RUNNING',
    })
    expect(processes.signals).toEqual([])
    expect(processes.treeStops).toEqual([])
    expect(store.writes).toHaveLength(0)
  })

  test('a stale session is reconciled first: not running, nothing signalled', async () => {
    const { env, processes } = fakeEnv({ records: [live('stale001')] })
    await expect(stopSession(env, 'stale001', 'kill', 100)).rejects.toMatchObject({
      code: 'SESSION_NOT_RUNNING',
    })
    expect(processes.signals).toEqual([])
  })
})
