import { execFileSync, spawn, spawnSync } from 'node:child_process'
import {
  chmodSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { createGzip } from 'node:zlib'
import { describe, expect, test } from 'vitest'
import { FileLock } from '../../src/sessions/record/lock.js'
import { cli, json, NODE_ENTRY } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { logPath, recordPath, stateOf } from '../helpers/sessions.js'
import { type TmpRepo, tmpDir, tmpGitRepo, tmpUserIn } from '../helpers/tmp.js'
import { canMount, fillDisk, mountTmpfs, unmountAfterAll } from '../helpers/tmpfs.js'

/**
 * Archives are input (SPEC §10; docs/security.md, "Archives"): an archive is a file from anywhere, its manifest
 * written by whoever made it. Each test hands `unarchive` a hostile one, or kills it, or fills its disk.
 */
unmountAfterAll()

const WORK =
  'echo "$HARNESS_SESSION_ID $(date +%s%N)" >> "f-$HARNESS_SESSION_ID"; git add -A; git commit -qm work'

interface Entry {
  id: string
  repo: string | null
  refs: { ref: string; commit: string }[]
}

/** Unpacks an archive, lets `edit` change its manifest, and packs it again (the members are untouched). */
async function repack(archive: string, edit: (manifest: { sessions: Entry[] }) => void): Promise<string> {
  const tar = await import('tar')
  const dir = tmpDir()
  await tar.x({ file: archive, cwd: dir })
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
  edit(manifest)
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest))
  const out = join(dir, 'hostile.tar.gz')
  const members = (manifest.members as { path: string }[]).map((m) => m.path)
  await tar.c({ gzip: true, file: out, cwd: dir, portable: true }, ['manifest.json', ...members])
  return out
}

/** Sessions with a commit each on their branch, archived (and so removed) to a file outside the project. */
async function archivedSessions(repo: TmpRepo, ids: string[], script = WORK): Promise<string> {
  for (const id of ids) await finishedSession(repo, script, ['--session-id', id])
  const out = join(repo.dir, '..', 'archives')
  const done = await cli(['session', 'archive', '--older-than', '0', '--force', '--output', out, '--json'], {
    cwd: repo.dir,
    env: repo.env,
  })
  expect(done.exitCode, done.stderr).toBe(0)
  return json<{ archive: { path: string } }>(done).archive.path
}

function refsOf(dir: string, env: NodeJS.ProcessEnv): string {
  return execFileSync('git', ['for-each-ref'], { cwd: dir, env, encoding: 'utf8' })
}

test('unarchive restores into the current project only, and only the refs the archived sessions own', async () => {
  const repo = tmpGitRepo()
  const archive = await archivedSessions(repo, ['abs1', 'rel1'])
  // Another repository of the user's (the manifest names it by absolute path), and a nested repository in the
  // project whose reference-transaction hook would run if git ran there (named by a relative path).
  const victim = join(repo.dir, '..', 'victim')
  execFileSync('git', ['clone', '-q', repo.dir, victim], { env: repo.env })
  const nested = join(repo.dir, 'vendor', 'lib')
  execFileSync('git', ['clone', '-q', repo.dir, nested], { env: repo.env })
  const marker = join(repo.dir, '..', 'hook-ran')
  writeFileSync(join(nested, '.git', 'hooks', 'reference-transaction'), `#!/bin/sh\ntouch '${marker}'\n`)
  chmodSync(join(nested, '.git', 'hooks', 'reference-transaction'), 0o755)
  const before = {
    victim: refsOf(victim, repo.env),
    nested: refsOf(nested, repo.env),
    main: repo.git('rev-parse', 'main'),
  }
  let tip = ''
  const hostile = await repack(archive, (manifest) => {
    for (const entry of manifest.sessions) {
      entry.repo = entry.id === 'abs1' ? victim : 'vendor/lib'
      tip = entry.refs[0]?.commit as string
      entry.refs.push(
        { ref: 'refs/heads/main', commit: tip },
        { ref: 'refs/heads/evil', commit: tip },
        { ref: 'refs/tags/x', commit: tip },
        { ref: `refs/heads/harness/other-${entry.id}`, commit: tip },
      )
    }
  })
  const restored = await cli(['session', 'unarchive', hostile, '--json'], {
    cwd: repo.dir,
    env: repo.env,
    process: true,
  })
  expect(restored.exitCode, restored.stderr).toBe(0)
  const report = json<{ restored: { id: string; skipped_refs: string[] }[] }>(restored)
  expect(report.restored.sort((a, b) => a.id.localeCompare(b.id)).map((r) => r.skipped_refs)).toEqual([
    ['refs/heads/main', 'refs/heads/evil', 'refs/tags/x', 'refs/heads/harness/other-abs1'],
    ['refs/heads/main', 'refs/heads/evil', 'refs/tags/x', 'refs/heads/harness/other-rel1'],
  ])
  expect(refsOf(victim, repo.env)).toBe(before.victim)
  expect(refsOf(nested, repo.env)).toBe(before.nested)
  expect(existsSync(marker)).toBe(false)
  expect(repo.git('rev-parse', 'main')).toBe(before.main)
  const refs = repo.git('for-each-ref', '--format=%(refname)')
  expect(refs).toMatch(/^refs\/heads\/harness\/abs1$/m)
  expect(refs).toMatch(/^refs\/heads\/harness\/rel1$/m)
  expect(refs).not.toMatch(/evil|refs\/tags\/x|other-/)
  const resume = await cli(['session', 'resume', 'abs1', '--json'], { cwd: repo.dir, env: repo.env })
  expect(resume.exitCode, resume.stderr).toBe(0)
  expect(existsSync(join(json<{ worktree_dir: string }>(resume).worktree_dir, 'f-abs1'))).toBe(true)
}, 180_000)

/** A gzipped tar whose entries are `size` zero bytes each (a header only declares them), then `trailing` zeros. */
async function bomb(
  file: string,
  entries: { name: string; size: number; text?: string }[],
  trailing = 0,
): Promise<void> {
  const gzip = createGzip({ level: 1 })
  const out = createWriteStream(file)
  gzip.pipe(out)
  const zeros = Buffer.alloc(1024 * 1024)
  const write = (chunk: Buffer) =>
    gzip.write(chunk) ? Promise.resolve() : new Promise<void>((r) => gzip.once('drain', () => r()))
  const zerosOf = async (n: number) => {
    for (let left = n; left > 0; left -= zeros.length)
      await write(left >= zeros.length ? zeros : zeros.subarray(0, left))
  }
  for (const { name, size, text } of entries) {
    await write(ustarHeader(name, size))
    if (text) await write(Buffer.from(text))
    await zerosOf(size - (text?.length ?? 0) + ((512 - (size % 512)) % 512))
  }
  await zerosOf(1024 + trailing)
  const closed = new Promise<void>((r) => out.on('close', () => r()))
  gzip.end()
  await closed
}

function ustarHeader(name: string, size: number): Buffer {
  const header = Buffer.alloc(512)
  header.write(name, 0)
  header.write('0000600\0', 100)
  header.write('0000000\0', 108)
  header.write('0000000\0', 116)
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124)
  header.write('00000000000\0', 136)
  header.write('        ', 148)
  header.write('0', 156)
  header.write('ustar\u000000', 257)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
  return header
}

test('sizes are checked before inflating: a manifest of 600 MB, or a stream that inflates past its manifest, stops early', async () => {
  const repo = tmpGitRepo()
  const dir = tmpDir()
  const bigManifest = join(dir, 'big-manifest.tar.gz')
  await bomb(bigManifest, [
    { name: 'manifest.json', size: 600 * 1024 * 1024, text: '{"format":"harness-archive",' },
  ])
  const manifest = JSON.stringify({
    format: 'harness-archive',
    version: 1,
    created_at: '2026-01-01T00:00:00.000Z',
    harness_version: 'x',
    sessions: [],
    members: [],
  })
  const trailing = join(dir, 'trailing.tar.gz')
  await bomb(trailing, [{ name: 'manifest.json', size: manifest.length, text: manifest }], 300 * 1024 * 1024)
  const untouched = stateOf(repo)
  for (const [file, reason] of [
    [bigManifest, /its manifest\.json declares 629145600 bytes, over 67108864/],
    [trailing, /it inflates beyond the \d+ bytes its manifest declares/],
  ] as const) {
    const result = await cli(['--json', 'session', 'unarchive', file], {
      cwd: repo.dir,
      env: repo.env,
      process: true,
    })
    expect(result.exitCode, result.stderr).toBe(1)
    const error = JSON.parse(result.stderr).error
    expect(error.code).toBe('ARCHIVE_CORRUPT')
    expect(error.message).toMatch(reason)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(stateOf(repo)).toBe(untouched)
  }
}, 180_000)

/** The ids of an archive's sessions in its manifest's order, the order unarchive restores them in. */
function archivedOrder(archive: string): string[] {
  const manifest = execFileSync('tar', ['-xzOf', archive, 'manifest.json'], { encoding: 'utf8' })
  return (JSON.parse(manifest) as { sessions: { id: string }[] }).sessions.map((s) => s.id)
}

/** `repo` holds `id` whole, as archived: its record, its log of 24 MB, its branch. */
function restoredWhole(repo: TmpRepo, id: string): void {
  expect(existsSync(recordPath(repo, id))).toBe(true)
  expect(readFileSync(logPath(repo, id)).length).toBeGreaterThanOrEqual(24 * 1024 * 1024)
  expect(repo.git('for-each-ref', '--format=%(refname)', `refs/heads/harness/${id}`)).toBe(
    `refs/heads/harness/${id}`,
  )
}

/** Starts `unarchive --json` and SIGKILLs it once `ready` (or lets it end, if it ends first); what it printed. */
async function unarchiveKilledWhen(
  repo: TmpRepo,
  archive: string,
  ready: () => boolean,
): Promise<{ stdout: string }> {
  const child = spawn(process.execPath, [NODE_ENTRY, 'session', 'unarchive', archive, '--json'], {
    cwd: repo.dir,
    env: repo.env,
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
  const closed = new Promise<void>((r) => child.on('close', () => r()))
  let done = false
  void closed.then(() => (done = true))
  const deadline = Date.now() + 120_000
  while (!done && !ready() && Date.now() < deadline) await new Promise((r) => setImmediate(r))
  child.kill('SIGKILL')
  await closed
  return { stdout }
}

/** The report a killed unarchive printed whole, if it did. */
function reportIn(stdout: string): { restored: { id: string }[] } | null {
  try {
    return JSON.parse(stdout)
  } catch {
    return null
  }
}

test('an unarchive SIGKILLed at any point is finished by running it again, and leaves no staging', async () => {
  // Logs of 24 MB: the restore spends a while on them.
  const script = `${WORK}; head -c 25165824 /dev/zero | tr '\\0' x`
  const repo = tmpGitRepo()
  const archive = await archivedSessions(repo, ['kill1', 'kill2'], script)
  const [first, last] = archivedOrder(archive) as [string, string]
  const pristine = join(tmpDir(), 'pristine')
  execFileSync('cp', ['-a', repo.dir, pristine])
  const tmp = join(repo.dir, '.harness', 'tmp')
  // The last session's record lock held here: no unarchive can write that record, so none can finish, wherever
  // its kill lands. Killed while staging, then once the last log is in place (the first session whole).
  const sessionsDir = join(repo.dir, '.harness', 'sessions')
  mkdirSync(sessionsDir, { recursive: true })
  const lock = await FileLock.acquire(join(sessionsDir, `${last}.lock`), { timeoutMs: 60_000 })
  try {
    const staging = await unarchiveKilledWhen(
      repo,
      archive,
      () => existsSync(tmp) && readdirSync(tmp).length > 0,
    )
    expect(staging.stdout).toBe('')
    const middle = await unarchiveKilledWhen(repo, archive, () => existsSync(logPath(repo, last)))
    expect(middle.stdout).toBe('')
  } finally {
    lock.release()
  }
  expect(existsSync(recordPath(repo, last))).toBe(false)
  expect(readdirSync(tmp).filter((n) => n.endsWith('.journal'))).toHaveLength(1)
  // A run killed while it wrote its journal leaves the journal's temp file: a later run removes it.
  const dead = spawnSync('true').pid as number
  writeFileSync(join(tmp, `unarchive-${'0'.repeat(24)}.journal.${dead}-0a1b2c3d4e5f.tmp`), '{}\n')
  const again = await cli(['session', 'unarchive', archive, '--json'], { cwd: repo.dir, env: repo.env })
  expect(again.exitCode, again.stderr).toBe(0)
  for (const id of [first, last]) restoredWhole(repo, id)
  expect(readdirSync(tmp)).toEqual([])
  // Once finished, an id that exists is refused again, as always.
  const third = await cli(['session', 'unarchive', archive], { cwd: repo.dir, env: repo.env })
  expect(third.exitCode).toBe(4)

  // Killed once every record is in place and the journal, which marks the restore under way, is gone: by then
  // the run has printed its report (it is done, and said so). Until then, running it again finishes it.
  for (let round = 0; round < 4; round++) {
    const copy: TmpRepo = { ...repo, dir: join(tmpDir(), 'project') }
    execFileSync('cp', ['-a', pristine, copy.dir])
    const copyTmp = join(copy.dir, '.harness', 'tmp')
    const journalThere = () => existsSync(copyTmp) && readdirSync(copyTmp).some((n) => n.endsWith('.journal'))
    let journalSeen = false
    const end = await unarchiveKilledWhen(copy, archive, () => {
      if (journalThere()) journalSeen = true
      return journalSeen && !journalThere()
    })
    const printed = reportIn(end.stdout)
    const rerun = await cli(['session', 'unarchive', archive, '--json'], { cwd: copy.dir, env: copy.env })
    if (rerun.exitCode !== 0) {
      // Refused (exit 4) only where the killed run had finished and printed every session restored.
      expect(rerun.exitCode, rerun.stderr).toBe(4)
      expect(
        printed?.restored.map((r) => r.id),
        `round ${round}: ${rerun.stderr}`,
      ).toEqual([first, last])
    }
    for (const id of [first, last]) restoredWhole(copy, id)
    expect(readdirSync(copyTmp)).toEqual([])
  }
}, 600_000)

test('a second unarchive of an archive whose unarchive is under way is refused, and changes nothing', async () => {
  const repo = tmpGitRepo()
  const opts = { cwd: repo.dir, env: repo.env }
  const archive = await archivedSessions(repo, ['busy1', 'busy2'])
  const [first, last] = archivedOrder(archive) as [string, string]
  const tmp = join(repo.dir, '.harness', 'tmp')
  // The last record's lock held here: the first unarchive cannot finish before the test lets it.
  const sessionsDir = join(repo.dir, '.harness', 'sessions')
  mkdirSync(sessionsDir, { recursive: true })
  const recordLock = await FileLock.acquire(join(sessionsDir, `${last}.lock`), { timeoutMs: 60_000 })
  const running = spawn(process.execPath, [NODE_ENTRY, 'session', 'unarchive', archive, '--json'], {
    ...opts,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  running.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const exited = new Promise<number | null>((r) => running.on('close', (code) => r(code)))
  try {
    // Stopped (not killed: it stays alive, holding what it holds) once it has taken the archive's lock.
    const deadline = Date.now() + 120_000
    const locked = () =>
      existsSync(tmp) && readdirSync(tmp).some((n) => /^unarchive-[0-9a-f]+\.lock$/.test(n))
    while (!locked() && Date.now() < deadline) await new Promise((r) => setImmediate(r))
    running.kill('SIGSTOP')
    const before = stateOf(repo)
    const second = await cli(['session', 'unarchive', archive], opts)
    expect(second.exitCode, second.stderr).toBe(1)
    expect(second.stderr).toMatch(/^harness: the unarchive of .* is locked by process \d+/m)
    expect(stateOf(repo)).toBe(before)
  } finally {
    recordLock.release()
    running.kill('SIGCONT')
  }
  expect(await exited, stderr).toBe(0)
  for (const id of [first, last]) expect(existsSync(recordPath(repo, id))).toBe(true)
  expect(readdirSync(tmp)).toEqual([])
}, 300_000)

describe.skipIf(!canMount)('a full disk during archive or unarchive (mounts a tmpfs: root only)', () => {
  test('DISK_FULL (exit 1), one line, no staging left, nothing removed or restored', async () => {
    const { mnt, base } = mountTmpfs('8m')
    const user = tmpUserIn(base)
    const { home, env } = user
    const dir = join(mnt, 'repo')
    mkdirSync(dir)
    const git = (...args: string[]) => user.git(dir, ...args)
    git('init', '-q')
    writeFileSync(join(dir, 'README.md'), 'project\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'project')
    const repo: TmpRepo = { dir, home, env, git, write: () => {} }
    // Logs of 1 MB each: copies of them do not fit once the disk is nearly full.
    const script = `${WORK}; head -c 1048576 /dev/zero | tr '\\0' x`
    for (const id of ['full1', 'full2']) await finishedSession(repo, script, ['--session-id', id])
    const elsewhere = join(base, 'archives')
    const ok = await cli(
      ['session', 'archive', '--older-than', '0', '--force', '--output', elsewhere, '--json'],
      {
        cwd: dir,
        env,
      },
    )
    expect(ok.exitCode, ok.stderr).toBe(0)
    const archive = json<{ archive: { path: string } }>(ok).archive.path
    for (const id of ['full3', 'full4']) await finishedSession(repo, script, ['--session-id', id])
    mkdirSync(join(dir, '.harness', 'tmp'), { recursive: true })
    fillDisk(mnt)
    const before = stateOf(repo)
    for (const args of [
      ['session', 'archive', '--older-than', '0', '--force', '--output', join(mnt, 'out')],
      ['session', 'unarchive', archive],
    ]) {
      const human = await cli(args, { cwd: dir, env })
      expect(human.exitCode, human.stderr).toBe(1)
      expect(human.stderr).toMatch(/^harness: cannot write .*: the disk is full\n/)
      expect(human.stderr).not.toMatch(/unexpected|\n\s+at /)
      const machine = await cli(['--json', ...args], { cwd: dir, env })
      expect(JSON.parse(machine.stderr).error.code, machine.stderr).toBe('DISK_FULL')
      expect(stateOf(repo)).toBe(before)
      expect(readdirSync(join(dir, '.harness', 'tmp'))).toEqual([])
    }
    for (const id of ['full3', 'full4']) expect(existsSync(recordPath(repo, id))).toBe(true)
  }, 240_000)
})
