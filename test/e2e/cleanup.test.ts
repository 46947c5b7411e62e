import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import {
  branchExists,
  editRecord,
  logPath,
  recordPath,
  type SessionJson,
  setLastActive,
  stateOf,
  writeProjectConfig,
} from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo, tmpPlainDir } from '../helpers/tmp.js'

interface Reason {
  code: string
  kind: 'unsafe' | 'blocked' | 'error'
  message: string
}
interface Report {
  dry_run: boolean
  older_than?: string
  older_than_ms?: number
  removed: {
    id: string
    worktree: string | null
    branch: { name: string; commit: string; merged_into: string | null } | null
    log: string | null
    forced: boolean
  }[]
  kept: { id: string; worktree: string | null; branch: string | null; reasons: Reason[] }[]
  snapshots: {
    id: string
    refs: { worktree?: string; branch?: string }
    commits: { worktree?: string | null; branch?: string | null }
    restore: string[]
  }[]
  skipped?: { running: number; younger: number; filtered: number }
}

const HOUR = 3_600_000

function expectGone(repo: ReturnType<typeof tmpGitRepo>, session: SessionJson): void {
  expect(existsSync(recordPath(repo, session.id))).toBe(false)
  expect(existsSync(session.worktree_dir)).toBe(false)
  expect(existsSync(logPath(repo, session.id))).toBe(false)
  expect(branchExists(repo, `harness/${session.id}`)).toBe(false)
  expect(repo.git('worktree', 'list', '--porcelain')).not.toContain(session.worktree_dir)
}

function expectIntact(repo: ReturnType<typeof tmpGitRepo>, session: SessionJson): void {
  expect(existsSync(recordPath(repo, session.id))).toBe(true)
  expect(existsSync(session.worktree_dir)).toBe(true)
  expect(existsSync(logPath(repo, session.id))).toBe(true)
  expect(branchExists(repo, `harness/${session.id}`)).toBe(true)
}

async function cleanup(repo: ReturnType<typeof tmpGitRepo>, ...args: string[]) {
  const result = await cli(['session', 'cleanup', '--json', ...args], { cwd: repo.dir, env: repo.env })
  return { result, report: result.exitCode === 0 ? json<Report>(result) : (undefined as unknown as Report) }
}

describe('harness session cleanup', () => {
  test('an old clean session goes entirely: record, worktree, branch, log', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo output')
    expect(existsSync(logPath(repo, session.id))).toBe(true)
    setLastActive(repo, session.id, 8 * 24 * HOUR)
    const { result, report } = await cleanup(repo) // default threshold: 7 days
    expect(result.exitCode, result.stderr).toBe(0)
    expect(report).toMatchObject({ dry_run: false, older_than: '7d', older_than_ms: 7 * 24 * HOUR, kept: [] })
    expect(report.removed).toEqual([
      {
        id: session.id,
        status: 'COMPLETED',
        last_active_at: expect.any(String),
        worktree: session.worktree_dir,
        branch: { name: `harness/${session.id}`, commit: repo.git('rev-parse', 'HEAD'), merged_into: 'main' },
        log: logPath(repo, session.id),
        forced: false,
      },
    ])
    expectGone(repo, session)
    expect(repo.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
    // Nothing was snapshotted for a clean, merged session.
    expect(repo.git('for-each-ref', 'refs/harness/')).toBe('')
  })

  test('a worktree with only an untracked file is kept and reported (exit 0)', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo new > notes.txt')
    const { result, report } = await cleanup(repo, '--older-than', '0')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(report.removed).toEqual([])
    expect(report.kept).toEqual([
      {
        id: session.id,
        status: 'COMPLETED',
        last_active_at: expect.any(String),
        worktree: session.worktree_dir,
        branch: `harness/${session.id}`,
        reasons: [
          {
            code: 'DIRTY',
            kind: 'unsafe',
            message: `worktree ${session.worktree_dir} has 1 uncommitted or untracked file`,
          },
        ],
      },
    ])
    expectIntact(repo, session)
    expect(readFileSync(join(session.worktree_dir, 'notes.txt'), 'utf8')).toBe('new\n')
    // For people: the same facts, and how --force would proceed.
    const human = await cli(['session', 'cleanup', '--older-than', '0'], { cwd: repo.dir, env: repo.env })
    expect(human.exitCode).toBe(0)
    expect(human.stdout).toContain(`Kept 1 session:\n  ${session.id}  COMPLETED`)
    expect(human.stdout).toContain('has 1 uncommitted or untracked file')
    expect(human.stdout).toContain('--force stores a snapshot under refs/harness/<id>/')
  })

  test('a worktree with only a tracked change is kept; an ignored file alone does not count', async () => {
    const repo = tmpGitRepo()
    repo.write('.gitignore', 'build/\n')
    repo.git('add', '-A')
    repo.git('commit', '-qm', 'ignore build')
    const changed = await finishedSession(repo, 'echo more >> README.md')
    const ignored = await finishedSession(repo, 'mkdir build && echo x > build/out.o')
    const { report } = await cleanup(repo, '--older-than', '0')
    expect(report.kept.map((k) => k.id)).toEqual([changed.id])
    expect(report.kept[0]?.reasons.map((r) => r.code)).toEqual(['DIRTY'])
    expectIntact(repo, changed)
    expect(readFileSync(join(changed.worktree_dir, 'README.md'), 'utf8')).toBe('# test repo\nmore\n')
    expect(report.removed.map((r) => r.id)).toEqual([ignored.id])
    expectGone(repo, ignored)
  })

  test('an unmerged branch is kept; a merged one is deleted', async () => {
    const repo = tmpGitRepo()
    const commit = (file: string) => `echo work > ${file} && git add ${file} && git commit -qm ${file}`
    const unmerged = await finishedSession(repo, commit('a.txt'))
    const merged = await finishedSession(repo, commit('b.txt'))
    repo.git('merge', '-q', '--no-edit', `harness/${merged.id}`)
    const { result, report } = await cleanup(repo, '--older-than', '0')
    expect(result.exitCode).toBe(0)
    expect(report.kept).toHaveLength(1)
    expect(report.kept[0]).toMatchObject({ id: unmerged.id })
    expect(report.kept[0]?.reasons).toEqual([
      {
        code: 'UNMERGED',
        kind: 'unsafe',
        message: `branch harness/${unmerged.id} has 1 commit not merged into main`,
      },
    ])
    expectIntact(repo, unmerged)
    expect(report.removed.map((r) => [r.id, r.branch?.merged_into])).toEqual([[merged.id, 'main']])
    expectGone(repo, merged)
    expect(repo.git('log', '--format=%s', '-1', 'main')).toBe('b.txt')
  })

  test('without --force each worktree is looked at once, under its lock; the report still says every reason', async () => {
    const repo = tmpGitRepo()
    const commit = (file: string) => `echo work > ${file} && git add ${file} && git commit -qm ${file}`
    const clean = await finishedSession(repo, 'true')
    const dirtyUnmerged = await finishedSession(repo, `${commit('a.txt')} && echo scratch > notes.txt`)
    const nested = await finishedSession(
      repo,
      'mkdir nested && cd nested && git init -q && echo precious > p.txt && git add p.txt && git commit -qm work',
    )
    const dirty = await finishedSession(repo, 'echo more >> README.md')
    // What planning says when it looks at every worktree (--dry-run takes no lock, so it looks then).
    const { report: predicted } = await cleanup(repo, '--older-than', '0', '--dry-run')
    const { result, report } = await cleanup(repo, '--older-than', '0')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(report.removed.map((r) => r.id)).toEqual([clean.id])
    expect(report.kept).toEqual(predicted.kept)
    const reasons = Object.fromEntries(report.kept.map((k) => [k.id, k.reasons.map((r) => r.code)]))
    expect(reasons).toEqual({
      [dirtyUnmerged.id]: ['DIRTY', 'UNMERGED'],
      [nested.id]: ['NESTED_REPO', 'DIRTY'],
      [dirty.id]: ['DIRTY'],
    })
    for (const session of [dirtyUnmerged, nested, dirty]) expectIntact(repo, session)
    expect(readFileSync(join(nested.worktree_dir, 'nested', 'p.txt'), 'utf8')).toBe('precious\n')
    expectGone(repo, clean)

    // Only clean sessions: their worktrees are proven clean once, under the locks (one `cat-file` for all
    // their HEADs), not once at planning and again under the locks.
    const other = tmpGitRepo()
    const trace = join(other.home, 'git-trace.txt')
    const more = [await finishedSession(other, 'true'), await finishedSession(other, 'true')]
    const traced = await cli(['session', 'cleanup', '--json', '--older-than', '0'], {
      cwd: other.dir,
      env: { ...other.env, GIT_TRACE: trace },
    })
    expect(traced.exitCode, traced.stderr).toBe(0)
    expect(
      json<Report>(traced)
        .removed.map((r) => r.id)
        .sort(),
    ).toEqual(more.map((s) => s.id).sort())
    const proofs = readFileSync(trace, 'utf8')
      .split('\n')
      .filter((line) => /built-in: git cat-file/.test(line))
    expect(proofs).toHaveLength(1)
  })

  test('a RUNNING session is never touched, even with --older-than 0 --force; delete refuses it (exit 4)', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { sleepMs: 60_000 })
    const run = await cli(['run', '-a', 'claude', '--detach', '--json', 'long task'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const live = json<SessionJson>(run)
    try {
      // Make it look ancient: age never matters for a RUNNING session.
      setLastActive(repo, live.id, 30 * 24 * HOUR)
      const before = stateOf(repo)
      const { result, report } = await cleanup(repo, '--older-than', '0', '--force')
      expect(result.exitCode, result.stderr).toBe(0)
      expect(report.removed).toEqual([])
      expect(report.kept).toEqual([])
      expect(report.skipped).toEqual({ running: 1, younger: 0, filtered: 0 })
      expect(stateOf(repo)).toBe(before)
      const del = await cli(['session', 'delete', live.id, '--force'], { cwd: repo.dir, env: repo.env })
      expect(del.exitCode).toBe(4)
      expect(del.stderr).toContain(`session "${live.id}" is running`)
      expect(del.stderr).toContain(`hint: stop it first: harness session kill ${live.id}`)
      const rm = await cli(['session', 'rm', live.id, '--json'], { cwd: repo.dir, env: repo.env })
      expect(rm.exitCode).toBe(4)
      expect(rm.stdout).toBe('')
      expect(JSON.parse(rm.stderr)).toMatchObject({ error: { code: 'SESSION_RUNNING', exit_code: 4 } })
      expect(stateOf(repo)).toBe(before)
    } finally {
      await cli(['session', 'kill', live.id, '--grace', '0.2s'], { cwd: repo.dir, env: repo.env })
    }
  })

  test('--force snapshots first; the printed restore commands bring back the exact files', async () => {
    const repo = tmpGitRepo()
    const script = [
      'echo committed > committed.txt && git add committed.txt && git commit -qm committed',
      'printf "changed line\\n" >> README.md',
      'mkdir -p notes && printf "untracked\\n" > notes/todo.txt',
    ].join(' && ')
    const session = await finishedSession(repo, script)
    const id = session.id
    const readme = readFileSync(join(session.worktree_dir, 'README.md'), 'utf8')
    const tip = repo.git('rev-parse', `harness/${id}`)
    const { result, report } = await cleanup(repo, '--older-than', '0', '--force')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(report.kept).toEqual([])
    expect(report.removed).toMatchObject([
      { id, forced: true, branch: { name: `harness/${id}`, commit: tip, merged_into: null } },
    ])
    expectGone(repo, session)
    expect(report.snapshots).toEqual([
      {
        id,
        refs: { branch: `refs/harness/${id}/branch`, worktree: `refs/harness/${id}/worktree` },
        commits: { branch: tip, worktree: expect.stringMatching(/^[0-9a-f]{40}$/) },
        restore: [
          `git -C ${repo.dir} branch restore-${id} refs/harness/${id}/branch`,
          `git -C ${repo.dir} worktree add ${session.worktree_dir} refs/harness/${id}/worktree`,
        ],
      },
    ])
    expect(repo.git('rev-parse', `refs/harness/${id}/worktree^`)).toBe(tip)
    // Run the commands exactly as printed.
    for (const command of report.snapshots[0]?.restore ?? []) {
      execFileSync('sh', ['-c', command], { cwd: tmpDir(), env: repo.env, stdio: 'pipe' })
    }
    expect(repo.git('rev-parse', `restore-${id}`)).toBe(tip)
    const restored = session.worktree_dir
    expect(readFileSync(join(restored, 'README.md'), 'utf8')).toBe(readme)
    expect(readme).toContain('changed line')
    expect(readFileSync(join(restored, 'notes', 'todo.txt'), 'utf8')).toBe('untracked\n')
    expect(readFileSync(join(restored, 'committed.txt'), 'utf8')).toBe('committed\n')
    // One step back and the snapshot is uncommitted work again, exactly as the agent left it.
    execFileSync('git', ['-C', restored, 'reset', '-q', 'HEAD~1'], { env: repo.env })
    const status = execFileSync('git', ['-C', restored, 'status', '--porcelain', '--untracked-files=all'], {
      env: repo.env,
      encoding: 'utf8',
    })
    expect(status.split('\n').filter(Boolean).sort()).toEqual([' M README.md', '?? notes/todo.txt'])
  })

  test('--dry-run changes nothing at all, not even a stale record', async () => {
    const repo = tmpGitRepo()
    const clean = await finishedSession(repo)
    const dirty = await finishedSession(repo, 'echo x > x.txt')
    const unmerged = await finishedSession(repo, 'echo y > y.txt && git add y.txt && git commit -qm y')
    const stale = await finishedSession(repo)
    // A RUNNING record whose processes are gone (another boot): any normal reader would reconcile it.
    editRecord(repo, stale.id, (record) => {
      record.status = 'RUNNING'
      record.completed_at = null
      record.exit_code = null
      for (const run of record.runs)
        Object.assign(run, { ended_at: null, exit_code: null, boot_id: 'another-boot', pid_start_time: '1' })
    })
    const before = stateOf(repo)

    for (const args of [
      ['session', 'cleanup', '--older-than', '0', '--dry-run'],
      ['session', 'cleanup', '--older-than', '0', '--dry-run', '--force', '--json'],
      ['session', 'delete', clean.id, '--dry-run'],
      ['session', 'rm', dirty.id, '--dry-run', '--force', '--json'],
      ['session', 'delete', stale.id, '--dry-run'],
      ['session', 'prune', '--older-than', '0', '--dry-run', '--force'],
    ]) {
      const result = await cli(args, { cwd: repo.dir, env: repo.env })
      expect(result.exitCode, `${args.join(' ')}: ${result.stderr}`).toBe(0)
      expect(stateOf(repo), args.join(' ')).toBe(before)
    }
    const { report } = await cleanup(repo, '--older-than', '0', '--dry-run', '--force')
    expect(report.dry_run).toBe(true)
    expect(report.removed.map((r) => r.id).sort()).toEqual([clean.id, dirty.id, unmerged.id].sort())
    expect(report.skipped).toMatchObject({ running: 1 })
    expect(report.snapshots.map((s) => [s.id, s.commits.worktree ?? null]).sort()).toEqual(
      [
        [dirty.id, null],
        [unmerged.id, null],
      ].sort(),
    )
    const plain = await cli(['session', 'cleanup', '--older-than', '0', '--dry-run'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(plain.stdout).toMatch(/^Dry run: nothing was changed\.\nWould remove 1 session:/)
    expect(stateOf(repo)).toBe(before)

    // The real run reconciles the stale record (as any reader does) but does not remove it in the same run.
    const real = await cleanup(repo, '--older-than', '0')
    expect(real.report.removed.map((r) => r.id)).toEqual([clean.id])
    expect(real.report.skipped).toMatchObject({ running: 1 })
    expect(JSON.parse(readFileSync(recordPath(repo, stale.id), 'utf8'))).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'interrupted',
    })
    expect(existsSync(stale.worktree_dir)).toBe(true)
  }, 240_000) // seven commands and a four-session repository: a generous ceiling for a loaded machine

  test('--older-than: just older is removed, just younger is kept; config default; bare numbers are days', async () => {
    const repo = tmpGitRepo()
    const older = await finishedSession(repo)
    const younger = await finishedSession(repo)
    setLastActive(repo, older.id, 61 * 60_000)
    setLastActive(repo, younger.id, 59 * 60_000)
    const { report } = await cleanup(repo, '--older-than', '1h')
    expect(report.removed.map((r) => r.id)).toEqual([older.id])
    expect(report.skipped).toEqual({ running: 0, younger: 1, filtered: 0 })
    expect(existsSync(recordPath(repo, younger.id))).toBe(true)

    // cleanup.older_than from the config, and a bare number meaning days.
    writeProjectConfig(repo.dir, repo.env, { cleanup: { older_than: '2' } })
    const day = 24 * HOUR
    const three = await finishedSession(repo)
    setLastActive(repo, three.id, 3 * day)
    setLastActive(repo, younger.id, 1 * day)
    const configured = await cleanup(repo)
    expect(configured.report).toMatchObject({ older_than: '2d', older_than_ms: 2 * day })
    expect(configured.report.removed.map((r) => r.id)).toEqual([three.id])
    const bare = await cleanup(repo, '--older-than', '0.5')
    expect(bare.report.older_than_ms).toBe(day / 2)
    expect(bare.report.removed.map((r) => r.id)).toEqual([younger.id])
  })

  test('invalid --older-than and --status values are usage errors (exit 2) and change nothing', async () => {
    const repo = tmpGitRepo()
    await finishedSession(repo)
    const before = stateOf(repo)
    for (const args of [
      ['--older-than', 'soon'],
      ['--older-than', '5x'],
      ['--older-than', ''],
      ['--older-than', '-1'],
      ['--older-than', '1h-'],
      ['--status', 'running'],
      ['--status', 'sleeping'],
    ]) {
      const result = await cli(['session', 'cleanup', ...args], { cwd: repo.dir, env: repo.env })
      expect(result.exitCode, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(/^harness: /)
    }
    const prune = await cli(['session', 'prune', '--older-than', 'later'], { cwd: repo.dir, env: repo.env })
    expect(prune.exitCode).toBe(2)
    expect(prune.stderr).toContain('invalid duration for --older-than: "later"')
    expect(stateOf(repo)).toBe(before)
  })

  test('--status filters; sessions without a worktree lose only their record and log', async () => {
    const repo = tmpGitRepo()
    const plain = tmpPlainDir()
    const failed = await cli(['run', '-a', 'exec', '--json', '--', 'sh', '-c', 'exit 3'], {
      cwd: repo.dir,
      env: repo.env,
    })
    const failedId = json<SessionJson>(failed).id
    const completed = await finishedSession(repo)
    const noWorktree = await finishedSession(repo, 'echo here > here.txt', ['--no-worktree'])
    expect(noWorktree.worktree_dir).toBe(repo.dir)
    const { report } = await cleanup(repo, '--older-than', '0', '--status', 'failed')
    expect(report.removed.map((r) => r.id)).toEqual([failedId])
    expect(report.skipped).toMatchObject({ filtered: 2 })
    expect(existsSync(recordPath(repo, completed.id))).toBe(true)

    const rest = await cleanup(repo, '--older-than', '0', '--status', 'completed')
    // The --no-worktree session wrote into the main checkout: that is never touched.
    expect(rest.report.kept).toEqual([])
    const entry = rest.report.removed.find((r) => r.id === noWorktree.id)
    expect(entry).toMatchObject({ worktree: null, branch: null, log: logPath(repo, noWorktree.id) })
    expect(existsSync(recordPath(repo, noWorktree.id))).toBe(false)
    expect(readFileSync(join(repo.dir, 'here.txt'), 'utf8')).toBe('here\n')
    expect(existsSync(repo.dir)).toBe(true)

    // Outside git altogether.
    const outside = await cli(['run', '-a', 'exec', '--json', '--', 'true'], {
      cwd: plain.dir,
      env: plain.env,
    })
    const outsideId = json<SessionJson>(outside).id
    const done = await cli(['session', 'rm', outsideId, '--json'], { cwd: plain.dir, env: plain.env })
    expect(done.exitCode, done.stderr).toBe(0)
    expect(json<Report>(done).removed).toMatchObject([{ id: outsideId, worktree: null, branch: null }])
    expect(existsSync(plain.dir)).toBe(true)
  })

  test('a branch checked out elsewhere is kept even with --force', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo y > y.txt && git add y.txt && git commit -qm y')
    repo.git('worktree', 'remove', session.worktree_dir)
    const elsewhere = join(tmpDir(), 'elsewhere')
    repo.git('worktree', 'add', '-q', elsewhere, `harness/${session.id}`)
    const { report } = await cleanup(repo, '--older-than', '0', '--force')
    expect(report.removed).toEqual([])
    expect(report.snapshots).toEqual([])
    expect(report.kept[0]?.reasons).toContainEqual({
      code: 'BRANCH_CHECKED_OUT',
      kind: 'blocked',
      message: `branch harness/${session.id} is checked out in ${elsewhere}`,
    })
    expect(branchExists(repo, `harness/${session.id}`)).toBe(true)
    expect(existsSync(recordPath(repo, session.id))).toBe(true)
  })

  test('a leftover empty folder and a missing worktree are handled; a foreign folder is left alone', async () => {
    const repo = tmpGitRepo()
    const gone = await finishedSession(repo)
    const empty = await finishedSession(repo)
    const foreign = await finishedSession(repo)
    // The worktree folder deleted by hand: only git's registration is left.
    execFileSync('rm', ['-rf', gone.worktree_dir])
    // The worktree removed with git, an empty folder left in its place.
    repo.git('worktree', 'remove', empty.worktree_dir)
    mkdirSync(empty.worktree_dir)
    // A worktree replaced by a plain folder with files: not harness's to delete.
    repo.git('worktree', 'remove', foreign.worktree_dir)
    mkdirSync(foreign.worktree_dir)
    writeFileSync(join(foreign.worktree_dir, 'precious.txt'), 'mine\n')
    const { report } = await cleanup(repo, '--older-than', '0')
    expect(report.removed.map((r) => r.id).sort()).toEqual([gone.id, empty.id].sort())
    expectGone(repo, gone)
    expectGone(repo, empty)
    expect(report.kept).toMatchObject([
      { id: foreign.id, reasons: [{ code: 'NOT_A_WORKTREE', kind: 'blocked' }] },
    ])
    expect(readFileSync(join(foreign.worktree_dir, 'precious.txt'), 'utf8')).toBe('mine\n')
  })

  test('the worktree the command runs in is not pulled from under it', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    const inside = await cli(['session', 'cleanup', '--older-than', '0', '--force', '--json'], {
      cwd: session.worktree_dir,
      env: repo.env,
    })
    expect(inside.exitCode, inside.stderr).toBe(0)
    expect(json<Report>(inside).kept).toMatchObject([
      { id: session.id, reasons: [{ code: 'CURRENT_DIRECTORY', kind: 'blocked' }] },
    ])
    expectIntact(repo, session)
    const { report } = await cleanup(repo, '--older-than', '0')
    expect(report.removed.map((r) => r.id)).toEqual([session.id])
  })

  test('progress stays off stdout under --json; many sessions in one run', async () => {
    const repo = tmpGitRepo()
    const sessions = []
    for (let i = 0; i < 4; i++) sessions.push(await finishedSession(repo))
    const { result, report } = await cleanup(repo, '--older-than', '0')
    expect(result.exitCode).toBe(0)
    expect(report.removed).toHaveLength(4)
    for (const session of sessions) expectGone(repo, session)
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
  })
})

describe('harness session delete', () => {
  test('removes one clean session; refuses a dirty one (exit 4, reasons, --force hint); --force removes it', async () => {
    const repo = tmpGitRepo()
    const clean = await finishedSession(repo)
    const dirty = await finishedSession(repo, 'echo wip > wip.txt')
    const ok = await cli(['session', 'delete', clean.id.slice(0, 5)], { cwd: repo.dir, env: repo.env })
    expect(ok.exitCode, ok.stderr).toBe(0)
    expect(ok.stdout).toContain(`Removed 1 session:\n  ${clean.id}  COMPLETED`)
    expectGone(repo, clean)

    const refused = await cli(['session', 'rm', dirty.id], { cwd: repo.dir, env: repo.env })
    expect(refused.exitCode).toBe(4)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toContain(
      `harness: session "${dirty.id}" was kept: worktree ${dirty.worktree_dir} has 1 uncommitted or untracked file`,
    )
    expect(refused.stderr).toContain(`hint: "harness session delete ${dirty.id} --force"`)
    const refusedJson = await cli(['session', 'rm', dirty.id, '--json'], { cwd: repo.dir, env: repo.env })
    expect(refusedJson.exitCode).toBe(4)
    expect(JSON.parse(refusedJson.stderr)).toMatchObject({ error: { code: 'SESSION_KEPT', exit_code: 4 } })
    expectIntact(repo, dirty)

    const forced = await cli(['session', 'rm', dirty.id, '--force', '--json'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(forced.exitCode, forced.stderr).toBe(0)
    const report = json<Report>(forced)
    expect(report.removed).toMatchObject([{ id: dirty.id, forced: true }])
    expect(report.snapshots[0]?.refs.worktree).toBe(`refs/harness/${dirty.id}/worktree`)
    expect(repo.git('show', `refs/harness/${dirty.id}/worktree:wip.txt`)).toBe('wip')
    expectGone(repo, dirty)

    const missing = await cli(['session', 'delete', 'nope1234'], { cwd: repo.dir, env: repo.env })
    expect(missing.exitCode).toBe(3)
  })

  test('--force never overwrites an earlier snapshot', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo one > f.txt')
    const earlier = repo.git('commit-tree', '-m', 'earlier', `${repo.git('rev-parse', 'HEAD')}^{tree}`)
    repo.git('update-ref', `refs/harness/${session.id}/worktree`, earlier)
    const forced = await cli(['session', 'rm', session.id, '--force', '--json'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(forced.exitCode, forced.stderr).toBe(0)
    expect(json<Report>(forced).snapshots[0]?.refs.worktree).toBe(`refs/harness/${session.id}/worktree-2`)
    expect(repo.git('rev-parse', `refs/harness/${session.id}/worktree`)).toBe(earlier)
    expect(repo.git('show', `refs/harness/${session.id}/worktree-2:f.txt`)).toBe('one')
  })

  test('--help states the safety rules', async () => {
    const { dir, env } = tmpPlainDir()
    for (const command of ['cleanup', 'delete', 'prune']) {
      const help = await cli(['session', command, '--help'], { cwd: dir, env })
      expect(help.exitCode).toBe(0)
      expect(help.stdout).toContain('Safety rules')
      expect(help.stdout).toContain('A RUNNING session is never touched')
      expect(help.stdout).toMatch(/git worktree add <dir> refs\/harness\/<(id|name)>\/worktree/)
      expect(help.stdout).toContain('git clean -fdx')
    }
  })
})
