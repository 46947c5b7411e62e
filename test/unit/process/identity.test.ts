import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  checkIdentity,
  hostFacts,
  identify,
  isDeadState,
  parseProcStat,
  readProcStat,
} from '../../../src/process/identity.js'
import { isGone, killAll, start, until } from '../../fixtures/procs/spawn.js'

const linux = process.platform === 'linux'

afterEach(() => {
  killAll()
})

/** A /proc/<pid>/stat line: fields 3.. after the command name; field 22 is the start time. */
function statLine(pid: number, comm: string, start: string): string {
  const rest = ['S', '41', '4242', '4242', '0', '-1', '4194560', ...Array(12).fill('0'), start, '1000', '200']
  return `${pid} (${comm}) ${rest.join(' ')}\n`
}

describe('parseProcStat', () => {
  it('reads the fields after the last parenthesis, whatever the command name holds', () => {
    const stat = parseProcStat(4242, statLine(4242, 'my ) odd (name) x', '987654'))
    expect(stat).toEqual({ pid: 4242, state: 'S', ppid: 41, pgrp: 4242, session: 4242, startTime: '987654' })
  })

  it('rejects text without a command name or with too few fields', () => {
    expect(parseProcStat(1, 'garbage')).toBeNull()
    expect(parseProcStat(1, '1 (sh) S 0 1')).toBeNull()
  })

  it.skipIf(!linux)(
    'parses a real process whose name holds spaces and parentheses',
    { tags: ['process'] },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'harness-identity-'))
      try {
        // The kernel names a process after the file it executed: here a script, which stays the shell running it.
        const name = 'a) b (c) d'
        const script = join(dir, name)
        writeFileSync(script, '#!/bin/sh\nsleep 600\n', { mode: 0o755 })
        const fx = start(script)
        const pid = fx.child.pid as number
        await until(
          () => readFileSync(`/proc/${pid}/stat`, 'utf8').startsWith(`${pid} (${name}) `),
          5000,
          'exec',
        )
        const stat = readProcStat(pid)
        expect(stat?.pid).toBe(pid)
        expect(stat?.ppid).toBe(process.pid)
        expect(isDeadState(stat?.state ?? 'X')).toBe(false)
        expect(stat?.startTime).toMatch(/^\d+$/)
        expect(identify(pid)?.start_time).toBe(stat?.startTime)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  )
})

describe('identify', () => {
  it('gives this process a start time and the host facts', () => {
    const id = identify(process.pid)
    expect(id?.pid).toBe(process.pid)
    expect(id?.start_time).toBeTruthy()
    expect(id?.start_time).toBe(readProcStat(process.pid)?.startTime)
    expect(id?.hostname).toBe(hostFacts().hostname)
  })

  it('gives nothing for a pid that does not exist', () => {
    expect(identify(2 ** 22 + 17)).toBeNull()
  })
})

describe('checkIdentity', () => {
  it('says alive for a live child and dead once it exited', { tags: ['process'] }, async () => {
    const fx = start('sleep', ['600'])
    const id = identify(fx.child.pid as number)
    if (!id) throw new Error('no identity for a child that was just started')
    expect(checkIdentity(id)).toBe('alive')
    const exited = new Promise((resolve) => fx.child.on('exit', resolve))
    fx.child.kill('SIGKILL')
    await exited
    await until(() => checkIdentity(id) === 'dead', 60_000, 'the child to be reaped')
    expect(identify(id.pid)).toBeNull()
  })

  it.skipIf(!linux)('says dead for a zombie that nobody reaped', { tags: ['process'] }, async () => {
    const fx = start('leaves-zombie.sh')
    const [child] = await fx.pids(1)
    if (!child?.start_time) throw new Error('the short-lived child was not identified in time')
    expect(checkIdentity(child)).toBe('alive')
    await until(() => readProcStat(child.pid)?.state === 'Z', 60_000, 'the child to become a zombie')
    // Still in the process table, same start time, but it will never run again.
    expect(readProcStat(child.pid)?.startTime).toBe(child.start_time)
    expect(isDeadState('Z')).toBe(true)
    expect(checkIdentity(child)).toBe('dead')
    expect(identify(child.pid)).toBeNull()
  })

  it('says dead when the pid is live but its start time differs (the pid was reused)', {
    tags: ['process'],
  }, () => {
    const fx = start('sleep', ['600'])
    const id = identify(fx.child.pid as number)
    if (!id?.start_time) throw new Error('no identity for a child that was just started')
    const other = linux ? String(BigInt(id.start_time) - 1n) : 'Thu Jan  1 00:00:00 1970'
    expect(checkIdentity({ ...id, start_time: other })).toBe('dead')
    expect(checkIdentity(id)).toBe('alive')
  })

  it('says dead for a pid that holds no process', () => {
    expect(checkIdentity({ pid: 2 ** 22 + 17, start_time: '12345', ...hostFacts() })).toBe('dead')
  })

  it('says dead for a pid recorded here without a start time that holds no process (docs/security.md)', () => {
    expect(checkIdentity({ pid: 2 ** 22 + 17, start_time: null, ...hostFacts() })).toBe('dead')
    const elsewhere = { ...hostFacts(), hostname: `${hostFacts().hostname}-elsewhere` }
    expect(checkIdentity({ pid: 2 ** 22 + 17, start_time: null, ...elsewhere })).toBe('unverifiable')
  })

  it('says unverifiable for a live process without a start time, or from another host or pid namespace', () => {
    const id = identify(process.pid)
    if (!id) throw new Error('no identity for this process')
    expect(checkIdentity({ ...id, start_time: null })).toBe('unverifiable')
    expect(checkIdentity({ ...id, start_time: undefined })).toBe('unverifiable')
    expect(checkIdentity({ ...id, pid: null })).toBe('unverifiable')
    expect(checkIdentity({ ...id, hostname: `${id.hostname}-elsewhere` })).toBe('unverifiable')
    if (id.pid_namespace) {
      expect(checkIdentity({ ...id, pid_namespace: 'pid:[1]' })).toBe('unverifiable')
    }
    expect(checkIdentity(id)).toBe('alive')
  })

  it.skipIf(!linux)('says dead for a record from another boot of this machine', () => {
    const id = identify(process.pid)
    if (!id?.boot_id) throw new Error('no boot id on Linux')
    expect(checkIdentity({ ...id, boot_id: '00000000-0000-0000-0000-000000000000' })).toBe('dead')
  })

  it('treats a stopped process as alive (only zombies are dead)', { tags: ['process'] }, async () => {
    const fx = start('sleep', ['600'])
    const id = identify(fx.child.pid as number)
    if (!id) throw new Error('no identity for a child that was just started')
    process.kill(id.pid, 'SIGSTOP')
    try {
      if (linux) await until(() => readProcStat(id.pid)?.state === 'T', 60_000, 'the child to stop')
      expect(checkIdentity(id)).toBe('alive')
    } finally {
      process.kill(id.pid, 'SIGCONT')
    }
    expect(isGone(id)).toBe(false)
  })
})
