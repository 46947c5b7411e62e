import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { readRecords, recordPath, type SessionJson, writeRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

/** Sessions by name (`run --name`) and exact `--session-id` (docs/commands.md, "harness run"; issue 37). */

const harness = (repo: TmpRepo, ...args: string[]) => cli(args, { cwd: repo.dir, env: repo.env })
const errorOf = (stderr: string) => (JSON.parse(stderr) as { error: { code: string; message: string } }).error

describe('run --session-id is exact', () => {
  test('a prefix of an existing id is refused (exit 4, naming the match); nothing is made', async () => {
    const repo = tmpGitRepo()
    const first = await finishedSession(repo, 'true', ['--session-id', '918fa2b3'])
    const prefix = await harness(repo, 'run', '-a', 'exec', '--session-id', '918f', '--json', '--', 'true')
    expect(prefix.exitCode).toBe(4)
    expect(errorOf(prefix.stderr)).toMatchObject({ code: 'SESSION_ID_CLASH' })
    expect(errorOf(prefix.stderr).message).toContain('is a prefix of session 918fa2b3')
    expect(prefix.stdout).toBe('')
    expect(readRecords(repo.dir).map((r) => r.id)).toEqual([first.id])
    expect(existsSync(join(repo.dir, '.harness', 'worktrees', '918f'))).toBe(false)
    // So "918f" still reaches the session it reached before.
    const path = await harness(repo, 'session', 'path', '918f')
    expect(path.stdout).toBe(`${first.worktree_dir}\n`)
    // The whole id resumes it, as before.
    const resumed = await harness(repo, 'run', '--session-id', '918fa2b3', '--json')
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    expect(json<SessionJson>(resumed).runs).toHaveLength(2)
  })

  test("a session's name is refused as a new --session-id, naming the session", async () => {
    const repo = tmpGitRepo()
    const named = await finishedSession(repo, 'true', ['--name', 'auth'])
    const clash = await harness(repo, 'run', '-a', 'exec', '--session-id', 'auth', '--', 'true')
    expect(clash.exitCode).toBe(4)
    expect(clash.stderr).toContain(`harness: --session-id "auth" is the name of session ${named.id}`)
    expect(readRecords(repo.dir)).toHaveLength(1)
  })
})

describe('run --name', () => {
  test('a name reaches its session wherever an id does: path, show, list, resume, diff', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo a > a.txt', ['--name', 'auth-api'])
    expect(session.name).toBe('auth-api')
    const path = await harness(repo, 'session', 'path', 'auth-api')
    expect(path.stdout).toBe(`${session.worktree_dir}\n`)
    const show = await harness(repo, 'session', 'show', 'auth-api')
    expect(show.stdout).toMatch(new RegExp(`^ID: +${session.id}\\nName: +auth-api\\n`))
    const list = await harness(repo, 'session', 'list')
    expect(list.stdout.split('\n')[0]).toMatch(/^ID +NAME +AGENT/)
    expect(list.stdout).toMatch(new RegExp(`${session.id} +auth-api +exec`))
    const diff = await harness(repo, 'session', 'diff', 'auth-api', '--stat')
    expect(diff.stdout).toContain('a.txt')
    const resumed = await harness(repo, 'session', 'resume', 'auth-api', '--json')
    expect(resumed.exitCode, resumed.stderr).toBe(0)
    expect(json<SessionJson>(resumed)).toMatchObject({
      id: session.id,
      name: 'auth-api',
      status: 'COMPLETED',
    })
    // Completion offers it beside the ids.
    const completion = await harness(repo, '__complete', 'bash', '--', 'session', 'show', 'auth')
    expect(completion.stdout).toContain('auth-api')
  })

  test('names never look like ids; a taken name, or one that is an id, is exit 4 naming the session', async () => {
    const repo = tmpGitRepo()
    for (const bad of ['beef', 'c0ffee12', 'a/b', '-x', 'x'.repeat(65)]) {
      const run = await harness(repo, 'run', '-a', 'exec', '--name', bad, '--', 'true')
      expect(run.exitCode, bad).toBe(2)
      expect(run.stderr, bad).toContain('invalid name')
    }
    const first = await finishedSession(repo, 'true', ['--name', 'auth'])
    const taken = await harness(repo, 'run', '-a', 'exec', '--name', 'auth', '--json', '--', 'true')
    expect(taken.exitCode).toBe(4)
    expect(errorOf(taken.stderr)).toMatchObject({
      code: 'NAME_TAKEN',
      message: `the name "auth" is taken by session ${first.id}`,
    })
    const id = await finishedSession(repo, 'true', ['--session-id', 'release-1'])
    const asId = await harness(repo, 'run', '-a', 'exec', '--name', 'release-1', '--', 'true')
    expect(asId.exitCode).toBe(4)
    expect(asId.stderr).toContain(`the name "release-1" is the id of session ${id.id}`)
    expect(readRecords(repo.dir)).toHaveLength(2)
  })

  test('resolution order: exact id, then name, then unique id prefix', async () => {
    const repo = tmpGitRepo()
    const byId = await finishedSession(repo, 'true', ['--session-id', 'feat1234'])
    // "feat" is a prefix of feat1234, yet a name: from now on it reaches the named session.
    const named = await finishedSession(repo, 'true', ['--name', 'feat'])
    const id = async (input: string) =>
      json<SessionJson>(await harness(repo, 'session', 'show', input, '--json')).id
    expect(await id('feat')).toBe(named.id)
    expect(await id('feat1')).toBe(byId.id)
    expect((await harness(repo, 'session', 'path', 'feat')).stdout).toBe(`${named.worktree_dir}\n`)
    // A record whose id is a name (copied in from elsewhere): its exact id wins over the name.
    const record = JSON.parse(readFileSync(recordPath(repo, byId.id), 'utf8')) as Record<string, unknown>
    writeRecord(repo.dir, repo.env, { ...record, id: 'feat', worktree_dir: repo.dir, name: null })
    expect(await id('feat')).toBe('feat')
  })
})

describe('two `run --name x` at once', () => {
  const rounds = Number(process.env.HARNESS_RACE_ITERATIONS ?? 10)
  test(`exactly one gets the name, the other exit 4 and leaves nothing behind (${rounds} rounds)`, async () => {
    const repo = tmpGitRepo()
    for (let round = 0; round < rounds; round++) {
      const name = `race-${round}`
      const start = () =>
        cli(['run', '-a', 'exec', '--name', name, '--json', '--', 'true'], {
          cwd: repo.dir,
          env: repo.env,
          process: true,
        })
      const results = await Promise.all([start(), start()])
      const codes = results.map((r) => r.exitCode).sort()
      expect(codes, results.map((r) => r.stderr).join('\n')).toEqual([0, 4])
      const loser = results.find((r) => r.exitCode === 4)
      expect(errorOf(loser?.stderr ?? '').code).toBe('NAME_TAKEN')
      const holders = readRecords(repo.dir).filter((r) => r.name === name)
      expect(holders).toHaveLength(1)
    }
    // The losers' worktrees and branches were undone: one of each per round.
    const records = readRecords(repo.dir)
    expect(records).toHaveLength(rounds)
    expect(repo.git('branch', '--list', 'harness/*').split('\n')).toHaveLength(rounds)
  })
})
