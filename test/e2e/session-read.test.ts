import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { hostFacts } from '../../src/process/identity.js'
import { SPEC_EXAMPLE } from '../fixtures/records.js'
import { cli, json } from '../helpers/cli.js'
import { goneRun, writeRecord as writeSealed } from '../helpers/sessions.js'
import { projectEnv, tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'

const SPEC_RECORD = SPEC_EXAMPLE

type Rec = Record<string, unknown>

function writeRecord(project: string, record: Rec, name = `${record.id}.json`): string {
  return writeSealed(project, projectEnv(project), record as Rec & { id: string }, { name })
}

function record(id: string, overrides: Rec = {}): Rec {
  return {
    ...SPEC_RECORD,
    id,
    git_branch: `harness/${id}`,
    worktree_dir: `/tmp/wt/${id}`,
    ...overrides,
  }
}

describe('session list / show / path on hand-written records', () => {
  test("the README's example record loads and shows correctly", async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, SPEC_RECORD)
    const list = await cli(['session', 'list'], { cwd: dir, env })
    expect(list.exitCode).toBe(0)
    expect(list.stderr).toBe('')
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ID\s+AGENT\s+STATUS\s+BRANCH\s+AGE\s+TASK$/)
    expect(lines[1]).toMatch(
      /^3f9a12c8\s+claude\s+COMPLETED\s+harness\/3f9a12c8\s+\S+ ago\s+Implement REST endpoints/,
    )

    const show = await cli(['session', 'show', '3f9a12c8'], { cwd: dir, env })
    expect(show.exitCode).toBe(0)
    for (const text of [
      'ID:',
      '3f9a12c8',
      'COMPLETED',
      'supervised',
      'Implement REST endpoints for authentication',
      '/home/user/project/.harness/worktrees/3f9a12c8',
      'harness/3f9a12c8',
      '48120',
      '2026-09-24T18:32:10Z',
      '32m 10s',
    ]) {
      expect(show.stdout).toContain(text)
    }

    const showJson = await cli(['session', 'inspect', '3f9a', '--json'], { cwd: dir, env })
    expect(showJson.exitCode).toBe(0)
    expect(json(showJson)).toEqual({
      ...SPEC_RECORD,
      seal: expect.any(String),
      sealed: true,
      project: expect.any(String),
      seal_key: expect.any(String),
    })

    // Its worktree folder does not exist here: no path to cd into, but a way back.
    const path = await cli(['session', 'path', '3f9a12c8'], { cwd: dir, env })
    expect(path).toMatchObject({ exitCode: 4, stdout: '' })
    expect(path.stderr).toContain(`no longer exists: ${SPEC_RECORD.worktree_dir}`)
    expect(path.stderr).toContain('hint: "harness session resume 3f9a12c8" recreates it')
  })

  test('lowercase status and unknown fields load, and survive a rewrite', async () => {
    const { dir, env } = tmpPlainDir()
    // A RUNNING record whose supervisor and agent are verifiably gone (pid 1's start time never matches "1").
    const stale = record('aaaa1111', {
      status: 'running',
      future_field: { keep: ['me'] },
      completed_at: null,
      exit_code: null,
      runs: [goneRun('2026-09-24T18:00:00.000Z', { ...hostFacts(), future_run_field: 42 })],
    })
    const path = writeRecord(dir, stale)
    const list = await cli(['session', 'list', '--json'], { cwd: dir, env })
    expect(list.exitCode).toBe(0)
    const [listed] = json<Rec[]>(list)
    expect(listed).toMatchObject({ id: 'aaaa1111', status: 'PAUSED', stop_reason: 'interrupted' })
    const onDisk = JSON.parse(readFileSync(path, 'utf8')) as Rec
    expect(onDisk.status).toBe('PAUSED')
    expect(onDisk.future_field).toEqual({ keep: ['me'] })
    expect((onDisk.runs as Rec[])[0]?.future_run_field).toBe(42)
    expect(onDisk.rev).toBe(1)
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  test('a corrupt or invalid file is reported, skipped and left untouched', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, record('good0001'))
    const sessions = join(dir, '.harness', 'sessions')
    writeFileSync(join(sessions, 'torn0001.json'), '{"id": "torn0001", "provi')
    writeFileSync(join(sessions, 'bad00001.json'), JSON.stringify({ id: 'bad00001', status: 'DONE' }))
    const before = readdirSync(sessions).map((f) => [f, readFileSync(join(sessions, f), 'utf8')])
    const list = await cli(['session', 'list', '--json'], { cwd: dir, env })
    expect(list.exitCode).toBe(0)
    expect(json<Rec[]>(list).map((r) => r.id)).toEqual(['good0001'])
    expect(list.stderr).toContain(join(sessions, 'torn0001.json'))
    expect(list.stderr).toContain('not valid JSON')
    expect(list.stderr).toContain(join(sessions, 'bad00001.json'))
    expect(list.stderr).toMatch(/status/)
    const after = readdirSync(sessions).map((f) => [f, readFileSync(join(sessions, f), 'utf8')])
    expect(after).toEqual(before)

    const show = await cli(['session', 'show', 'torn0001'], { cwd: dir, env })
    expect(show.exitCode).toBe(1)
    expect(show.stdout).toBe('')
    expect(show.stderr).toContain('corrupt session record')
  })

  test('a project without .harness reports no sessions and creates nothing', async () => {
    const repo = tmpGitRepo()
    const before = readdirSync(repo.dir).sort()
    const list = await cli(['session', 'list'], { cwd: repo.dir, env: repo.env })
    expect(list).toMatchObject({ exitCode: 0, stdout: 'No sessions.\n', stderr: '' })
    const listJson = await cli(['session', 'ls', '--json'], { cwd: repo.dir, env: repo.env })
    expect(json(listJson)).toEqual([])
    const path = await cli(['session', 'path', 'abcd1234'], { cwd: repo.dir, env: repo.env })
    expect(path.exitCode).toBe(3)
    expect(readdirSync(repo.dir).sort()).toEqual(before)
    expect(repo.git('status', '--porcelain')).toBe('')
  })

  // Sort, ties, agent and limit are decided by the list service: test/unit/sessions/query/query.test.ts.
  test('filters as flags: statuses in any case, bad values exit 2', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(
      dir,
      record('aaaa0001', { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-03-01T00:00:00.000Z' }),
    )
    writeRecord(
      dir,
      record('aaaa0002', {
        created_at: '2026-02-01T00:00:00.000Z',
        updated_at: '2026-02-01T00:00:00.000Z',
        status: 'FAILED',
        provider: 'codex',
      }),
    )
    writeRecord(
      dir,
      record('aaaa0003', {
        created_at: '2026-02-01T00:00:00.000Z',
        updated_at: '2026-01-15T00:00:00.000Z',
        status: 'killed',
      }),
    )
    const ids = async (...args: string[]) => {
      const result = await cli(['session', 'list', '--json', ...args], { cwd: dir, env })
      expect(result.exitCode, result.stderr).toBe(0)
      return json<Rec[]>(result).map((r) => r.id)
    }
    expect(
      await ids('--status', 'failed,KILLED', '--sort', 'updated', '--agent', 'codex,claude', '--limit', '5'),
    ).toEqual(['aaaa0002', 'aaaa0003'])
    for (const bad of [['--sort', 'size'], ['--status', 'DONE'], ['--limit', 'x'], ['--bogus']]) {
      const result = await cli(['session', 'list', ...bad], { cwd: dir, env })
      expect(result.exitCode, bad.join(' ')).toBe(2)
      expect(result.stderr).toMatch(/^harness: /)
    }
  })

  test('tables fit the width and carry no colour codes when piped', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, record('bbbb0001', { prompt: 'x'.repeat(200), git_branch: `harness/${'y'.repeat(60)}` }))
    const narrow = await cli(['session', 'list'], { cwd: dir, env: { ...env, COLUMNS: '60' } })
    expect(narrow.exitCode).toBe(0)
    for (const line of narrow.stdout.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(60)
    expect(narrow.stdout).toContain('…')
    const plain = await cli(['session', 'list'], { cwd: dir, env: { ...env, NO_COLOR: undefined } })
    expect(plain.stdout).not.toContain('\u001b[')
  })

  test('usage errors exit 2, also under --json', async () => {
    const { dir, env } = tmpPlainDir()
    const unknown = await cli(['frobnicate'], { cwd: dir, env })
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain("harness: unknown command 'frobnicate'")
    const missingArg = await cli(['session', 'show', '--json'], { cwd: dir, env })
    expect(missingArg.exitCode).toBe(2)
    expect(JSON.parse(missingArg.stderr).error).toMatchObject({ code: 'USAGE', exit_code: 2 })
    const help = await cli(['--help'], { cwd: dir, env })
    expect(help.exitCode).toBe(0)
    expect(help.stdout).toContain('Usage: harness')
    const version = await cli(['--version'], { cwd: dir, env })
    expect(version).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+/) })
  })

  test('.harness is found from subdirectories, linked worktrees, --dir and HARNESS_DIR', async () => {
    const repo = tmpGitRepo()
    const folder = join(repo.dir, '.harness', 'worktrees', 'cccc0001')
    mkdirSync(folder, { recursive: true })
    writeRecord(repo.dir, record('cccc0001', { worktree_dir: folder }))
    const sub = join(repo.dir, 'pkg', 'api')
    mkdirSync(sub, { recursive: true })
    const fromSub = await cli(['session', 'path', 'cccc0001'], { cwd: sub, env: repo.env })
    expect(fromSub.stdout).toBe(`${folder}\n`)
    const linked = join(repo.home, 'elsewhere')
    repo.git('worktree', 'add', '-q', linked)
    const fromLinked = await cli(['session', 'path', 'cccc0001'], { cwd: linked, env: repo.env })
    expect(fromLinked.stdout).toBe(`${folder}\n`)
    const viaDir = await cli(['--dir', repo.dir, 'session', 'path', 'cccc0001'], {
      cwd: repo.home,
      env: repo.env,
    })
    expect(viaDir.stdout).toBe(`${folder}\n`)
    const viaEnv = await cli(['session', 'path', 'cccc0001'], {
      cwd: repo.home,
      env: { ...repo.env, HARNESS_DIR: join(repo.dir, '.harness') },
    })
    expect(viaEnv.stdout).toBe(`${folder}\n`)
  })
})
