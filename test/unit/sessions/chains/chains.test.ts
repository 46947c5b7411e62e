import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { chainStatus, createChain, killChain, openChains } from '../../../../src/sessions/chains/chains.js'
import type { ChainRunner } from '../../../../src/sessions/chains/store.js'
import { FAKE_PLACE, FakeClock, fakeEnv, finishedRecord, runningRecord } from '../../../helpers/fake-env.js'
import { tmpDir } from '../../../helpers/tmp.js'

/**
 * The chain services through their port: sessions in a memory store, a fake process table and clock; the chain
 * files themselves on disk in a temp project (the chain store is the real one, sealed with a temp user's key).
 */
function chainEnv(records = [finishedRecord('done0001'), finishedRecord('done0002')]) {
  const root = tmpDir()
  return fakeEnv({
    root,
    records,
    env: { HOME: root, XDG_STATE_HOME: join(root, 'state') },
    clock: new FakeClock(Date.parse('2026-11-01T09:00:00.000Z')),
  })
}

/** The chain `name` with a runner (pid 70 on the fake host, or wherever `place` says) and the given steps. */
async function runningChain(
  fake: ReturnType<typeof chainEnv>,
  name: string,
  sessions: string[],
  place: Partial<ChainRunner> = FAKE_PLACE,
): Promise<void> {
  await createChain(fake.env, name, sessions)
  const chains = await openChains(fake.env)
  await chains.update(name, (chain) => ({
    ...chain,
    runner: { pid: 70, start_time: 'r70', started_at: '2026-11-01T08:00:00.000Z', ...place },
  }))
}

describe('chain create, through the port', () => {
  test('adopts sealed sessions as steps, in order, stamped by the port clock', async () => {
    const fake = chainEnv()
    const view = await createChain(fake.env, 'nightly', ['done0001', 'done0002'])
    expect(view).toMatchObject({ name: 'nightly', sealed: true, state: 'completed', runner: null })
    expect(view.steps.map((step) => [step.n, step.session_id])).toEqual([
      [1, 'done0001'],
      [2, 'done0002'],
    ])
    const stored = (await openChains(fake.env)).get('nightly')
    expect(stored?.created_at).toBe('2026-11-01T09:00:00.000Z')
    expect(stored?.steps.map((step) => step.added_at)).toEqual([
      '2026-11-01T09:00:00.000Z',
      '2026-11-01T09:00:00.000Z',
    ])
  })

  test('refuses a session twice, a foreign record, and a bad name, writing nothing', async () => {
    const fake = chainEnv([finishedRecord('done0001'), { ...finishedRecord('frgn0001'), sealed: false }])
    await expect(createChain(fake.env, 'twice', ['done0001', 'done0001'])).rejects.toThrow(/already a step/)
    await expect(createChain(fake.env, 'foreign', ['frgn0001'])).rejects.toMatchObject({ exitCode: 4 })
    await expect(createChain(fake.env, '../up', ['done0001'])).rejects.toMatchObject({ exitCode: 2 })
    expect((await openChains(fake.env)).list()).toEqual([])
  })
})

describe('chain kill, through the port: what is signalled, and when nothing is', () => {
  test('a live runner: stop request by this process, its running step stopped, the runner tree stopped, released', async () => {
    const fake = chainEnv([
      finishedRecord('done0001'),
      runningRecord('step0002', { supervisor: [50, 's50'], agent: [51, 'a51'] }),
    ])
    const { env, processes, store } = fake
    processes.alive(70, 'r70').alive(51, 'a51')
    // The step's supervisor settles its record when signalled, as the real one does.
    processes.alive(50, 's50', () => {
      processes.exit(51)
      void store.update('step0002', (r) => ({ ...r, status: 'KILLED' })).then(() => processes.exit(50))
    })
    await runningChain(fake, 'nightly', ['done0001', 'step0002'])
    expect((await chainStatus(env, 'nightly')).runner?.liveness).toBe('running')

    const result = await killChain(env, 'nightly', 1500)

    expect(result).toMatchObject({ name: 'nightly', runner_pid: 70, killed_session: 'step0002' })
    expect(processes.signals[0]).toEqual({ pid: 50, signal: 'SIGTERM' })
    expect(processes.treeStops).toEqual([{ pid: 70, graceMs: 1500 }])
    const stored = (await openChains(env)).get('nightly')
    expect(stored).toMatchObject({
      runner: null,
      stop_request: null,
      last_outcome: 'killed by "harness chain kill"',
    })
    expect(store.get('step0002')?.status).toBe('KILLED')
  })

  test('a runner on another host is never signalled: the chain is released (CHAIN_UNVERIFIED)', async () => {
    const fake = chainEnv()
    await runningChain(fake, 'away', ['done0001'], { ...FAKE_PLACE, hostname: 'elsewhere' })
    fake.processes.alive(70, 'r70')
    await expect(killChain(fake.env, 'away', 1000)).rejects.toMatchObject({ code: 'CHAIN_UNVERIFIED' })
    expect(fake.processes.signals).toEqual([])
    expect(fake.processes.treeStops).toEqual([])
    expect((await openChains(fake.env)).get('away')?.runner).toBeNull()
  })

  test('a runner that has gone: its orphaned running step is stopped directly, the runner not at all', async () => {
    const fake = chainEnv([runningRecord('orph0001', { supervisor: [52, 's52'], agent: [53, 'a53'] })])
    fake.processes.alive(53, 'a53')
    await runningChain(fake, 'gone', ['orph0001'])
    const result = await killChain(fake.env, 'gone', 800)
    expect(result.killed_session).toBe('orph0001')
    expect(fake.processes.treeStops).toEqual([{ pid: 53, graceMs: 800 }])
    expect(fake.processes.signals.some((s) => s.pid === 70)).toBe(false)
  })

  test('a chain whose runner is this very process, or that runs nothing, is refused', async () => {
    const fake = chainEnv()
    await runningChain(fake, 'self', ['done0001'], { ...FAKE_PLACE, pid: fake.processes.selfPid })
    fake.processes.alive(fake.processes.selfPid, 'r70')
    await expect(killChain(fake.env, 'self', 100)).rejects.toThrow(/its own runner/)
    await createChain(fake.env, 'idle', ['done0002'])
    await expect(killChain(fake.env, 'idle', 100)).rejects.toMatchObject({ code: 'CHAIN_NOT_RUNNING' })
    expect(fake.processes.signals).toEqual([])
    expect(fake.processes.treeStops).toEqual([])
  })
})
