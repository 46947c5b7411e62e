import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { branchExists, editRecord, recordPath, type SessionJson } from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'

// Limits hold where data is written (docs/security.md, "Limits at write time"): harness never writes a record
// it could not read back.

const MiB = 1024 * 1024

describe('a long prompt', () => {
  test('a 600 KB piped prompt: a small record, the prompt beside it, listed, shown, exported, archived and deleted whole', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const opts = { cwd: repo.dir, env: agents.env }
    const prompt = `${'Refactor the session store so that every write is checked. '.repeat(11_000)}END`
    expect(prompt.length).toBeGreaterThan(600_000)
    // Too long for the kernel as one argument: the run is recorded FAILED (exit 5), never a crash.
    const run = await cli(['run', '-a', 'claude'], { ...opts, input: prompt })
    expect(run.exitCode, run.stderr).toBe(5)
    expect(run.stderr).toContain('argument list too long (E2BIG)')

    const listed = await cli(['--json', 'session', 'list'], opts)
    expect(listed.exitCode, listed.stderr).toBe(0)
    expect(listed.stderr).toBe('')
    const [session] = json<SessionJson[]>(listed)
    const id = session?.id as string
    expect(session).toMatchObject({ status: 'FAILED', prompt_file: { bytes: prompt.length } })
    expect(statSync(recordPath(repo, id)).size).toBeLessThan(64 * 1024)
    const file = join(repo.dir, '.harness', 'sessions', `${id}.prompt`)
    expect(readFileSync(file, 'utf8')).toBe(prompt)
    expect(statSync(file).mode & 0o777).toBe(0o600)

    const shown = await cli(['--json', 'session', 'show', id], opts)
    expect(shown.exitCode, shown.stderr).toBe(0)
    expect(json<SessionJson>(shown).prompt).toBe(prompt)
    const text = await cli(['session', 'show', id], opts)
    expect(text.stdout).toContain('END')
    expect(text.stdout).toMatch(/Prompt file: +\d+ bytes, kept beside the record/)
    const exported = await cli(['--json', 'session', 'export', id], opts)
    expect(exported.exitCode, exported.stderr).toBe(0)
    expect(json<{ task: string }>(exported).task).toBe(prompt)

    // Archived and restored with its prompt.
    const out = tmpDir()
    const archived = await cli(['session', 'archive', '--older-than', '0', '--output', out, '--json'], opts)
    expect(archived.exitCode, archived.stderr).toBe(0)
    expect(existsSync(file)).toBe(false)
    const archive = json<{ archive: { path: string } }>(archived).archive.path
    const restored = await cli(['session', 'unarchive', archive], opts)
    expect(restored.exitCode, restored.stderr).toBe(0)
    expect(readFileSync(file, 'utf8')).toBe(prompt)
    expect(json<SessionJson>(await cli(['--json', 'session', 'show', id], opts)).prompt).toBe(prompt)

    // Removed whole: record, prompt file, worktree and branch.
    const resumed = await cli(['session', 'resume', id, '--detach', 'go on'], opts)
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    const waited = await cli(['session', 'wait', id, '--timeout', '120s'], opts)
    expect(waited.exitCode, waited.stderr).toBe(0)
    const deleted = await cli(['session', 'delete', id], opts)
    expect(deleted.exitCode, deleted.stderr).toBe(0)
    expect(readdirSync(join(repo.dir, '.harness', 'sessions')).filter((n) => n.startsWith(id))).toEqual([])
    expect(branchExists(repo, `harness/${id}`)).toBe(false)
  })

  test('a prompt over 16 MiB on stdin is a usage error, and nothing is made', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const run = await cli(['run', '-a', 'claude'], {
      cwd: repo.dir,
      env: agents.env,
      input: 'x'.repeat(16 * MiB + 1),
    })
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('the prompt on stdin is over 16777216 bytes')
    expect(existsSync(join(repo.dir, '.harness', 'sessions'))).toBe(false)
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
  })
})

describe('checkpoints', () => {
  test('a checkpoint that would push a record past 1 MiB is refused: RECORD_TOO_BIG, the record readable and listed', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo hi > hi.txt')
    const id = session.id
    // A session near the limit: checkpoints like the ones harness writes, the last message padded to the byte.
    const base = repo.git('rev-parse', 'HEAD')
    editRecord(repo, id, (record) => {
      const checkpoints: Record<string, unknown>[] = []
      for (let n = 0; ; n++) {
        checkpoints.push({
          n,
          ref: `refs/harness/${id}/checkpoints/${n}`,
          commit: base,
          head: base,
          message: `checkpoint ${n}`,
          created_at: '2026-01-01T00:00:00.000Z',
          trigger: 'manual',
          files_changed: 0,
          tokens_used: null,
        })
        record.checkpoints = checkpoints
        if (JSON.stringify(record, null, 2).length > MiB - 4096) break
      }
    })
    // Then padded (sealed, as harness writes it) to 200 bytes below the limit: less than any checkpoint takes.
    const pad = (bytes: number) =>
      editRecord(repo, id, (record) => {
        const checkpoints = record.checkpoints as { message: string }[]
        const last = checkpoints[checkpoints.length - 1] as { message: string }
        last.message += 'x'.repeat(bytes)
      })
    pad(MiB - 200 - statSync(recordPath(repo, id)).size)
    const before = readFileSync(recordPath(repo, id))
    expect(before.length).toBe(MiB - 200)
    const taken = await cli(['--json', 'session', 'checkpoint', id, '-m', 'one more'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(taken.exitCode).toBe(1)
    expect(JSON.parse(taken.stderr)).toMatchObject({ error: { code: 'RECORD_TOO_BIG' } })
    expect(readFileSync(recordPath(repo, id)).equals(before)).toBe(true)
    const shown = await cli(['--json', 'session', 'show', id], { cwd: repo.dir, env: repo.env })
    expect(shown.exitCode, shown.stderr).toBe(0)
    const listed = await cli(['--json', 'session', 'list'], { cwd: repo.dir, env: repo.env })
    expect(json<SessionJson[]>(listed).map((s) => s.id)).toEqual([id])
    expect(listed.stderr).toBe('')
  })
})

describe('a listing', () => {
  test('shipped records of 1 MiB each: a few read whole, the rest reported too large, the others listed, in bounded memory', async () => {
    const repo = tmpGitRepo()
    const mine = await finishedSession(repo, 'true')
    const sessions = join(repo.dir, '.harness', 'sessions')
    const pad = 'x'.repeat(MiB - 600)
    for (let i = 0; i < 80; i++) {
      const id = `big${String(i).padStart(5, '0')}`
      const record = {
        id,
        provider: 'claude',
        status: 'COMPLETED',
        worktree_dir: repo.dir,
        created_at: '2026-01-01T00:00:00.000Z',
        prompt: pad,
      }
      writeFileSync(join(sessions, `${id}.json`), JSON.stringify(record))
    }
    const listed = spawnSync('/usr/bin/time', ['-f', '%M', HARNESS_BIN, 'session', 'list', '--json'], {
      cwd: repo.dir,
      env: repo.env,
      encoding: 'utf8',
      maxBuffer: 256 * MiB,
      timeout: 300_000,
    })
    expect(listed.status, listed.stderr).toBe(0)
    const ids = (JSON.parse(listed.stdout) as SessionJson[]).map((s) => s.id)
    expect(ids).toContain(mine.id)
    const big = ids.filter((id) => id.startsWith('big'))
    // Records over 256 KiB are read whole until 32 MiB of them were; the others are refused at their size.
    expect(big.length).toBeGreaterThan(0)
    expect(big.length).toBeLessThanOrEqual(33)
    const refused = listed.stderr.split('\n').filter((line) => line.includes('too large for this listing'))
    expect(refused).toHaveLength(80 - big.length)
    expect(refused[0]).toMatch(/"harness session show big\d+" reads it/)
    const peakMiB = Number(listed.stderr.trim().split('\n').at(-1)) / 1024
    expect(peakMiB).toBeLessThan(300)
    // One of them is still shown whole.
    const left = refused[0]?.match(/show (big\d+)/)?.[1] as string
    const shown = await cli(['--json', 'session', 'show', left], { cwd: repo.dir, env: repo.env })
    expect(shown.exitCode, shown.stderr).toBe(0)
  }, 300_000)
})
