import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { hostFacts } from '../../src/process/identity.js'
import { cli, json } from '../helpers/cli.js'
import { goneRun, writeRecord } from '../helpers/sessions.js'
import { isolatedEnv } from '../helpers/tmp.js'
import { canMount, fillDisk, mountTmpfs, unmountAfterAll } from '../helpers/tmpfs.js'

/**
 * Disk faults on real small file systems (docs/security.md): a 128 KB tmpfs that the test mounts, and a
 * read-only remount of it. Mounting needs root, as in CI; elsewhere these tests are skipped, visibly.
 */
unmountAfterAll()

function smallDisk() {
  const { mnt, base } = mountTmpfs('128k')
  const dir = join(mnt, 'work')
  mkdirSync(dir)
  const home = join(base, 'home') // the user's state folder (the seal key) is not on the small disk
  mkdirSync(home)
  return { mnt, dir, env: isolatedEnv(home) }
}

describe.skipIf(!canMount)('disk faults on a real small file system (mounts a tmpfs: root only)', () => {
  test('an update that does not fit: DISK_FULL (exit 1), the old record byte-identical, no temp or lock files', async () => {
    const { mnt, dir, env } = smallDisk()
    const run = await cli(['run', '-a', 'exec', '--json', '--', 'true'], { cwd: dir, env })
    expect(run.exitCode, run.stderr).toBe(0)
    const { id } = json<{ id: string }>(run)
    const sessions = join(dir, '.harness', 'sessions')
    const before = readFileSync(join(sessions, `${id}.json`))
    fillDisk(mnt)
    const resume = await cli(['--json', 'session', 'resume', id], { cwd: dir, env })
    expect(resume.exitCode).toBe(1)
    expect(JSON.parse(resume.stderr).error.code).toBe('DISK_FULL')
    const human = await cli(['session', 'resume', id], { cwd: dir, env })
    expect(human.stderr).toMatch(/^harness: cannot write .*: the disk is full\n/)
    expect(readFileSync(join(sessions, `${id}.json`))).toEqual(before)
    expect(readdirSync(sessions)).toEqual([`${id}.json`])
  })

  test('a headless run whose log fills the disk still records the agent exit, with log_error saying the log is incomplete', async () => {
    const { dir, env } = smallDisk()
    // The agent waits until the record holds its pid (so the fill cannot race that update), then prints
    // 512 KB, four times what the disk holds, and exits 3.
    const record = '"$HARNESS_DIR/sessions/$HARNESS_SESSION_ID.json"'
    const script = `while ! grep -q '"pid": '$$, ${record}; do sleep 0.02; done; head -c 524288 /dev/zero | tr '\\0' x; exit 3`
    const run = await cli(['--json', 'run', '-a', 'exec', '--', 'sh', '-c', script], { cwd: dir, env })
    expect(run.exitCode, run.stderr.slice(-2000)).toBe(3)
    const result = json<{ id: string; status: string; exit_code: number; log_error?: string }>(run)
    expect(result).toMatchObject({ status: 'FAILED', exit_code: 3 })
    expect(result.log_error).toMatch(/^the log is incomplete: .*ENOSPC: the disk is full/)
    // The output still reached harness's own output (stderr under --json), all of it.
    expect(run.stderr.match(/x{64,}/g)?.join('').length).toBe(524_288)
    const sessions = join(dir, '.harness', 'sessions')
    const stored = JSON.parse(readFileSync(join(sessions, `${result.id}.json`), 'utf8'))
    expect(stored).toMatchObject({ status: 'FAILED', exit_code: 3, log_error: result.log_error })
    expect(readdirSync(sessions)).toEqual([`${result.id}.json`])
    expect(readdirSync(join(dir, '.harness', 'logs'))).toEqual([`${result.id}.log`])
    const show = await cli(['session', 'show', result.id], { cwd: dir, env })
    expect(show.stdout).toMatch(/Log error: +the log is incomplete/)
  })

  test('a read-only store still lists and shows; a stale session is shown reconciled, not written', async () => {
    const { mnt, dir, env } = smallDisk()
    const run = await cli(['run', '-a', 'exec', '--json', '--', 'true'], { cwd: dir, env })
    expect(run.exitCode, run.stderr).toBe(0)
    const started = '2026-11-01T10:00:00.000Z'
    const path = writeRecord(dir, env, {
      id: 'stale001',
      provider: 'exec',
      status: 'RUNNING',
      worktree_dir: dir,
      is_worktree: false,
      created_at: started,
      runs: [goneRun(started, { ...hostFacts() })],
    })
    const before = readFileSync(path)
    execFileSync('mount', ['-o', 'remount,ro', mnt])
    const list = await cli(['session', 'list', '--json'], { cwd: dir, env })
    expect(list.exitCode, list.stderr).toBe(0)
    const listed = json<{ id: string; status: string }[]>(list)
    expect(listed.map((r) => r.id).sort()).toEqual([json<{ id: string }>(run).id, 'stale001'].sort())
    expect(listed.find((r) => r.id === 'stale001')?.status).toBe('PAUSED')
    expect(list.stderr.match(/read-only/g)).toHaveLength(1)
    const show = await cli(['session', 'show', 'stale001'], { cwd: dir, env })
    expect(show.exitCode, show.stderr).toBe(0)
    expect(readFileSync(path)).toEqual(before)
  })
})
