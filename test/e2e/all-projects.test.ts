import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { goneRun, recordPath, type SessionJson, writeRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

/** `session list --all-projects` over the user's index of projects (issue 37). */

type Listed = SessionJson & { project_dir: string; sealed: boolean; name?: string }

/** Another repository of the same user (same HOME and state folder), beside `repo`. */
function otherProject(repo: TmpRepo, name: string): TmpRepo {
  const dir = join(repo.dir, '..', name)
  mkdirSync(dir)
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, env: repo.env, encoding: 'utf8' }).trim()
  git('init', '-q')
  writeFileSync(join(dir, 'README.md'), `# ${name}\n`)
  git('add', '-A')
  git('commit', '-qm', 'initial')
  return { ...repo, dir, git, write: (path, content) => writeFileSync(join(dir, path), content) }
}

const indexFile = (repo: TmpRepo) => join(repo.home, '.local', 'state', 'harness', 'projects.json')

describe('session list --all-projects', () => {
  test("every project's sessions, newest first, with a PROJECT column; --json gives project_dir", async () => {
    const repo = tmpGitRepo()
    const other = otherProject(repo, 'other')
    const here = await finishedSession(repo, 'true', ['--name', 'here-one'])
    const there = await finishedSession(other, 'true', ['--name', 'there-one'])
    // The index: both projects, written when each .harness was made, readable by the user alone.
    const index = JSON.parse(readFileSync(indexFile(repo), 'utf8')) as { projects: Record<string, unknown> }
    expect(Object.keys(index.projects).sort()).toEqual([repo.dir, other.dir].sort())
    expect(statSync(indexFile(repo)).mode & 0o777).toBe(0o600)

    const list = await cli(['session', 'list', '--all-projects'], { cwd: repo.dir, env: repo.env })
    expect(list.exitCode, list.stderr).toBe(0)
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID +PROJECT +NAME +AGENT +STATUS/)
    expect(lines[1]).toMatch(new RegExp(`^${there.id} +${other.dir} +there-one +exec +COMPLETED`))
    expect(lines[2]).toMatch(new RegExp(`^${here.id} +${repo.dir} +here-one +exec +COMPLETED`))
    const asJson = json<Listed[]>(
      await cli(['session', 'list', '--all-projects', '--json'], { cwd: other.dir, env: repo.env }),
    )
    expect(asJson.map((s) => [s.id, s.project_dir, s.sealed])).toEqual([
      [there.id, other.dir, true],
      [here.id, repo.dir, true],
    ])
    // Without it, a listing is this project's alone.
    expect(
      json<Listed[]>(await cli(['session', 'list', '--json'], { cwd: repo.dir, env: repo.env })).map(
        (s) => s.id,
      ),
    ).toEqual([here.id])
    // A project that is gone is pruned from the index.
    rmSync(other.dir, { recursive: true, force: true })
    const after = json<Listed[]>(
      await cli(['session', 'list', '--all-projects', '--json'], { cwd: repo.dir, env: repo.env }),
    )
    expect(after.map((s) => s.id)).toEqual([here.id])
    expect(Object.keys(JSON.parse(readFileSync(indexFile(repo), 'utf8')).projects)).toEqual([repo.dir])
  })

  test("other projects' records follow every trust rule: foreign shown as such, stale not written, unsafe ones left out", async () => {
    const repo = tmpGitRepo()
    const other = otherProject(repo, 'other')
    const mine = await finishedSession(repo)
    await finishedSession(other)
    // A record of this project copied into the other one: foreign there (sealed for another folder).
    const copy = JSON.parse(readFileSync(recordPath(repo, mine.id), 'utf8')) as Record<string, unknown>
    writeFileSync(
      join(other.dir, '.harness', 'sessions', 'copy0001.json'),
      JSON.stringify({ ...copy, id: 'copy0001' }),
    )
    // A RUNNING record there whose processes are verifiably gone: shown PAUSED, the file left as it is.
    const stale = writeRecord(other.dir, repo.env, {
      ...copy,
      id: 'stale001',
      status: 'RUNNING',
      completed_at: null,
      runs: [goneRun('2026-09-24T18:00:00.000Z')],
    })
    const before = readFileSync(stale, 'utf8')
    const list = json<Listed[]>(
      await cli(['session', 'list', '--all-projects', '--json'], { cwd: repo.dir, env: repo.env }),
    )
    expect(list.find((s) => s.id === 'copy0001')).toMatchObject({
      sealed: false,
      seal_problem: 'other-project',
      project_dir: other.dir,
    })
    expect(list.find((s) => s.id === 'stale001')).toMatchObject({ status: 'PAUSED', project_dir: other.dir })
    expect(readFileSync(stale, 'utf8')).toBe(before)
    const table = await cli(['session', 'list', '--all-projects'], { cwd: repo.dir, env: repo.env })
    expect(table.stdout).toMatch(/copy0001 .* COMPLETED \(foreign\)/)

    // A project whose .harness others may write is not read at all (as the walk-up refuses it).
    chmodSync(join(other.dir, '.harness'), 0o777)
    const unsafe = await cli(['session', 'list', '--all-projects', '--json'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(unsafe.exitCode, unsafe.stderr).toBe(0)
    expect(json<Listed[]>(unsafe).map((s) => s.id)).toEqual([mine.id])
    expect(unsafe.stderr).toContain(`harness: warning: ${other.dir}: not listed: `)
    chmodSync(join(other.dir, '.harness'), 0o700)
  })

  test('--status, --agent and --limit apply across projects', async () => {
    const repo = tmpGitRepo()
    const other = otherProject(repo, 'other')
    await finishedSession(repo)
    const failed = await cli(['run', '-a', 'exec', '--json', '--', 'false'], {
      cwd: other.dir,
      env: repo.env,
    })
    const failedId = json<SessionJson>(failed).id
    const only = json<Listed[]>(
      await cli(['session', 'list', '--all-projects', '--status', 'failed', '--json'], {
        cwd: repo.dir,
        env: repo.env,
      }),
    )
    expect(only.map((s) => s.id)).toEqual([failedId])
    const limited = json<Listed[]>(
      await cli(['session', 'list', '--all-projects', '--limit', '1', '--json'], {
        cwd: repo.dir,
        env: repo.env,
      }),
    )
    expect(limited.map((s) => s.id)).toEqual([failedId])
  })

  test('projects made at the same moment by separate processes all reach the index (it is written under its lock)', async () => {
    const repo = tmpGitRepo()
    const projects = Array.from({ length: 6 }, (_, i) => otherProject(repo, `p${i}`))
    const made = await Promise.all(
      projects.map((p) =>
        cli(['config', 'set', 'defaults.agent', 'exec'], { cwd: p.dir, env: repo.env, process: true }),
      ),
    )
    for (const result of made) expect(result.exitCode, result.stderr).toBe(0)
    const index = JSON.parse(readFileSync(indexFile(repo), 'utf8')) as { projects: Record<string, unknown> }
    expect(Object.keys(index.projects).sort()).toEqual(projects.map((p) => p.dir).sort())
  })
})
