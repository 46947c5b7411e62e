import { afterEach, describe, expect, it } from 'vitest'
import {
  checkIdentity,
  hostFacts,
  identify,
  type ProcessIdentity,
  readProcStat,
} from '../../../src/process/identity.js'
import { listProcesses, stopProcessTree } from '../../../src/process/stop.js'
import { isGone, killAll, snapshotTree, start, until } from '../../fixtures/procs/spawn.js'

/** The recorded process is still the one running under its pid (not a zombie, not a reused pid). */
const isAlive = (identity: ProcessIdentity) => checkIdentity(identity) === 'alive'

afterEach(() => {
  killAll()
})

function must(id: ProcessIdentity | undefined): ProcessIdentity & { start_time: string } {
  if (!id?.start_time) throw new Error('a fixture process could not be identified')
  return id as ProcessIdentity & { start_time: string }
}

const pidsOf = (ids: ProcessIdentity[]) => ids.map((id) => id.pid).sort((a, b) => a - b)

describe('listProcesses', () => {
  it('holds this process and its parent, with start times', () => {
    const table = listProcesses()
    const self = table.find((stat) => stat.pid === process.pid)
    expect(self?.ppid).toBe(process.ppid)
    expect(self?.startTime).toBe(identify(process.pid)?.start_time)
    expect(table.some((stat) => stat.pid === process.ppid)).toBe(true)
  })
})

describe('snapshotTree', { tags: ['process'] }, () => {
  it('finds the root, its group and its descendants', async () => {
    const fx = start('stubborn.sh', [], { detached: true })
    const ids = await fx.pids(4)
    const root = must(ids[0])
    expect(pidsOf(snapshotTree(root))).toEqual(pidsOf(ids))
    for (const id of snapshotTree(root)) expect(id.start_time).toBe(readProcStat(id.pid)?.startTime)
  })

  it('is empty for a root whose start time does not match', async () => {
    const fx = start('sleep', ['600'])
    const id = must(identify(fx.child.pid as number) ?? undefined)
    expect(snapshotTree({ pid: id.pid, start_time: '1' })).toEqual([])
    expect(snapshotTree({ pid: id.pid, start_time: null })).toEqual([])
  })
})

describe('stopProcessTree', { tags: ['process'] }, () => {
  it('stops an obedient tree with SIGTERM alone', async () => {
    const fx = start('obedient.sh', [], { detached: true })
    const ids = await fx.pids(2)
    const root = must(ids[0])
    const outcome = await stopProcessTree(root, { graceMs: 5000 })
    expect(outcome).toMatchObject({
      rootFound: true,
      rootState: 'alive',
      signalled: 2,
      killed: 0,
      survivors: [],
    })
    for (const id of ids) expect(isGone(id)).toBe(true)
  })

  it('wakes a stopped (Ctrl-Z) tree so SIGTERM works without waiting out the grace period', async () => {
    const fx = start('obedient.sh', [], { detached: true })
    const ids = await fx.pids(2)
    const root = must(ids[0])
    for (const id of ids) process.kill(id.pid, 'SIGSTOP')
    await until(() => ids.every((id) => readProcStat(id.pid)?.state === 'T'))
    const outcome = await stopProcessTree(root, { graceMs: 5000 })
    expect(outcome).toMatchObject({ rootFound: true, killed: 0, survivors: [] })
    for (const id of ids) expect(isGone(id)).toBe(true)
  })

  it('kills a root and grandchildren that ignore SIGTERM once the grace period is over', async () => {
    const fx = start('stubborn.sh', [], { detached: true })
    const ids = await fx.pids(4)
    const root = must(ids[0])
    let escalations = 0
    const outcome = await stopProcessTree(root, {
      graceMs: 1000,
      onEscalate: () => {
        escalations++
      },
    })
    expect(outcome).toMatchObject({ rootFound: true, signalled: 4, killed: 4, survivors: [] })
    expect(escalations).toBe(1)
    expect(outcome.elapsedMs).toBeGreaterThanOrEqual(1000)
    for (const id of ids) expect(isGone(id), `pid ${id.pid}`).toBe(true)
  })

  it('escalates to SIGKILL at once when aborted', async () => {
    const fx = start('stubborn.sh', [], { detached: true })
    const ids = await fx.pids(4)
    const abort = new AbortController()
    setTimeout(() => abort.abort(), 100)
    const outcome = await stopProcessTree(must(ids[0]), { graceMs: 30_000, signal: abort.signal })
    expect(outcome).toMatchObject({ rootFound: true, killed: 4, survivors: [] })
    for (const id of ids) expect(isGone(id), `pid ${id.pid}`).toBe(true)
  })

  it.each([
    ['in our process group (signals per pid)', false],
    ['as a group leader (group signals)', true],
  ])('finds and kills a child started after the snapshot, with the root %s', async (_, detached) => {
    const fx = start('forks-on-term.sh', [], { detached })
    const root = must((await fx.pids(1))[0])
    const before = snapshotTree(root)
    const outcome = await stopProcessTree(root, { graceMs: 1000 })
    // The root printed the new child's pid when SIGTERM made it start one.
    const late = must((await fx.pids(2))[1])
    expect(before.some((id) => id.pid === late.pid)).toBe(false)
    expect(isGone(root)).toBe(true)
    expect(isGone(late)).toBe(true)
    expect(outcome.rootFound).toBe(true)
    expect(outcome.killed).toBeGreaterThanOrEqual(2)
    expect(outcome.survivors).toEqual([])
  })

  it('signals nothing when the pid now belongs to another process (pid reuse)', async () => {
    const fx = start('sleep', ['600'])
    const id = must(identify(fx.child.pid as number) ?? undefined)
    const reused =
      process.platform === 'linux' ? String(BigInt(id.start_time) + 1n) : 'Thu Jan  1 00:00:00 1970'
    const outcome = await stopProcessTree({ ...id, start_time: reused }, { graceMs: 100 })
    expect(outcome).toMatchObject({ rootFound: false, rootState: 'dead', signalled: 0, killed: 0 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(isAlive(id)).toBe(true)
  })

  it('signals nothing when the identity cannot be verified, nor pid 1 or itself', async () => {
    const fx = start('sleep', ['600'])
    const id = must(identify(fx.child.pid as number) ?? undefined)
    const unverifiable = [
      { pid: id.pid, start_time: null },
      { ...id, hostname: `${hostFacts().hostname}-elsewhere` },
    ]
    for (const root of unverifiable) {
      const outcome = await stopProcessTree(root, { graceMs: 100 })
      expect(outcome).toMatchObject({ rootFound: false, rootState: 'unverifiable', signalled: 0 })
    }
    for (const pid of [1, process.pid]) {
      const self = identify(pid)
      const outcome = await stopProcessTree({ pid, start_time: self?.start_time ?? '0' }, { graceMs: 100 })
      expect(outcome).toMatchObject({ rootFound: false, rootState: 'refused', signalled: 0 })
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(isAlive(id)).toBe(true)
  })

  it('kills a child that left the group with setsid but is still a descendant', async () => {
    const fx = start('setsid-child.mjs', [], { detached: true })
    const ids = await fx.pids(2)
    const root = must(ids[0])
    const escaped = must(ids[1])
    const stat = readProcStat(escaped.pid)
    expect(stat?.ppid).toBe(root.pid)
    expect(stat?.pgrp).not.toBe(root.pid)
    expect(stat?.session).toBe(escaped.pid)
    const outcome = await stopProcessTree(root, { graceMs: 500 })
    expect(outcome).toMatchObject({ rootFound: true, signalled: 2, killed: 2, survivors: [] })
    expect(isGone(root)).toBe(true)
    expect(isGone(escaped)).toBe(true)
  })

  it('waits for nothing when the root is already gone', async () => {
    const fx = start('sleep', ['600'])
    const id = must(identify(fx.child.pid as number) ?? undefined)
    const exited = new Promise((resolve) => fx.child.on('exit', resolve))
    fx.child.kill('SIGKILL')
    await exited
    await until(() => !isAlive(id), 60_000, 'the child to be gone')
    // A grace of ten minutes: had it waited out the grace, the test would end at its ceiling instead.
    const outcome = await stopProcessTree(id, { graceMs: 600_000 })
    expect(outcome).toMatchObject({ rootFound: false, signalled: 0, killed: 0, survivors: [] })
    expect(outcome.rootState).toBe('dead')
  })
})
