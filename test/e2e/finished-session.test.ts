import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { logPath, recordPath, type SessionJson } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

/**
 * The agent of both sessions: output on stdout and stderr, its environment (what harness adds to it), a
 * commit on the session's branch and an uncommitted file (files_modified, the run-end checkpoint).
 */
const SCRIPT = [
  'echo out',
  'echo err >&2',
  'env | sort',
  'pwd',
  'echo new > new.txt && git add new.txt && git commit -qm new',
  'echo wip > wip.txt',
].join('; ')

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

/** Commits made at run time differ by their times: a commit stands for its tree, message and parents here. */
function commitShape(repo: TmpRepo, commit: unknown): string {
  return repo.git('show', '-s', '--format=tree %T%nparents %P%n%B', String(commit))
}

/**
 * A session as `run --json` prints it (or as its file holds it), with only what must differ between two runs
 * replaced: its id (and the branch, worktree folder and checkpoint refs named after it), the times, the pids and
 * process start times of the agent and of its supervisor (the binary's process, or the test worker), the seal
 * (a signature of the rest, checked by reading the record with the binary), and the commits the run made
 * (their times differ; their trees, messages and parents must not).
 */
function normalized(repo: TmpRepo, session: SessionJson): unknown {
  const text = JSON.stringify(session).replaceAll(session.id, '<id>')
  const record = JSON.parse(text) as SessionJson & { checkpoints: Record<string, unknown>[] }
  const time = (value: unknown) => {
    expect(value).toMatch(ISO_TIME)
    return '<time>'
  }
  const pid = (value: unknown) => {
    expect(Number(value)).toBeGreaterThan(0)
    return '<pid>'
  }
  // Null when the agent was gone before its start time could be read (a race of any quick agent).
  const startTime = (value: unknown) => (value === null ? '<pid>' : pid(value))
  for (const key of ['created_at', 'updated_at', 'completed_at'] as const) record[key] = time(record[key])
  record.pid = pid(record.pid)
  for (const run of record.runs) {
    for (const key of ['started_at', 'ended_at']) run[key] = time(run[key])
    for (const key of ['pid', 'supervisor_pid']) run[key] = pid(run[key])
    for (const key of ['pid_start_time', 'supervisor_start_time']) run[key] = startTime(run[key])
  }
  for (const checkpoint of record.checkpoints) {
    checkpoint.created_at = time(checkpoint.created_at)
    checkpoint.commit = commitShape(repo, checkpoint.commit).replaceAll(String(checkpoint.head), '<head>')
    checkpoint.head = commitShape(repo, checkpoint.head)
  }
  if ('seal' in record) {
    expect(record.seal).toMatch(/^[0-9a-f]{64}$/)
    record.seal = '<seal>'
  }
  return record
}

/** The session's worktree and branch as git sees them, and the refs harness keeps for it. */
function gitState(repo: TmpRepo, session: SessionJson): Record<string, unknown> {
  const inWorktree = (...args: string[]) =>
    execFileSync('git', args, { cwd: session.worktree_dir, env: repo.env, encoding: 'utf8' }).trim()
  const worktrees = repo.git('worktree', 'list', '--porcelain').split('\n\n')
  const entry = worktrees.find((w) => w.startsWith(`worktree ${session.worktree_dir}\n`)) ?? ''
  return {
    worktree: entry.replace(/^HEAD [0-9a-f]+$/m, 'HEAD <commit>').replaceAll(session.id, '<id>'),
    worktreeMode: (statSync(session.worktree_dir).mode & 0o777).toString(8),
    branch: inWorktree('symbolic-ref', 'HEAD').replaceAll(session.id, '<id>'),
    head: commitShape(repo, inWorktree('rev-parse', 'HEAD')),
    status: inWorktree('status', '--porcelain', '--untracked-files=all'),
    refs: repo
      .git('for-each-ref', '--format=%(refname)', `refs/harness/${session.id}/`)
      .replaceAll(session.id, '<id>'),
  }
}

/** What harness left under .harness for the session, besides its record: the log, and nothing half-done. */
function filesOf(repo: TmpRepo, session: SessionJson): string[] {
  const harnessDir = join(repo.dir, '.harness')
  const files: string[] = []
  for (const folder of ['sessions', 'logs']) {
    for (const name of readdirSync(join(harnessDir, folder))) {
      if (!name.startsWith(session.id)) continue
      const mode = (statSync(join(harnessDir, folder, name)).mode & 0o777).toString(8)
      files.push(`${folder}/${name.replace(session.id, '<id>')} ${mode}`)
    }
  }
  return files.sort()
}

/** The log, lines sorted: stdout and stderr reach it through two pipes, so their order is the agent's race. */
function logLines(repo: TmpRepo, session: SessionJson): string[] {
  return readFileSync(logPath(repo, session.id), 'utf8').replaceAll(session.id, '<id>').split('\n').sort()
}

test('a run in the test worker makes the session the binary makes: record, log, worktree, branch and refs', async () => {
  const repo = tmpGitRepo()
  // The fixture first: it also makes the project's folders the binary then finds.
  const fixture = await finishedSession(repo, SCRIPT)
  const binary = await finishedSession(repo, SCRIPT, [], { process: true })
  expect(fixture.id).not.toBe(binary.id)
  expect(fixture.status).toBe('COMPLETED')

  // What `run --json` printed, then what the record files hold.
  expect(normalized(repo, fixture)).toEqual(normalized(repo, binary))
  const onDisk = (session: SessionJson) =>
    JSON.parse(readFileSync(recordPath(repo, session.id), 'utf8')) as SessionJson
  expect(normalized(repo, onDisk(fixture))).toEqual(normalized(repo, onDisk(binary)))
  // The binary reads the fixture's record as its own: sealed for this user, not foreign.
  const shown = await Promise.all(
    [fixture, binary].map(async (session) => {
      const show = await cli(['session', 'show', session.id, '--json'], {
        cwd: repo.dir,
        env: repo.env,
        process: true,
      })
      expect(show.exitCode, show.stderr).toBe(0)
      return normalized(repo, json<SessionJson>(show))
    }),
  )
  expect(shown[0]).toEqual(shown[1])
  expect(shown[0]).toMatchObject({ sealed: true })

  expect(logLines(repo, fixture)).toEqual(logLines(repo, binary))
  expect(logLines(repo, fixture)).toContain('err')
  expect(filesOf(repo, fixture)).toEqual(filesOf(repo, binary))
  expect(filesOf(repo, fixture)).toEqual(['logs/<id>.log 600', 'sessions/<id>.json 600'])
  expect(gitState(repo, fixture)).toEqual(gitState(repo, binary))
  expect(existsSync(fixture.worktree_dir)).toBe(true)
})

test('a run in the test worker honours --session-id, --branch, --prompt and --no-worktree as the binary does', async () => {
  const repo = tmpGitRepo()
  // The same flags for both, but for the id (and the branch named after it).
  const flagSets = [
    (id: string) => ['--session-id', id, '--branch', `feature/${id}`, '--prompt', 'tidy the docs'],
    (id: string) => ['--session-id', id, '--no-worktree'],
  ]
  for (const [n, flags] of flagSets.entries()) {
    // Idempotent: without a worktree both agents write in the project itself, one after the other.
    const fixture = await finishedSession(repo, 'echo x > x.txt', flags(`fix${n}`))
    const binary = await finishedSession(repo, 'echo x > x.txt', flags(`bin${n}`), { process: true })
    expect(normalized(repo, fixture)).toEqual(normalized(repo, binary))
  }
})
