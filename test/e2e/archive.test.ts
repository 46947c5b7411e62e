import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { logPath, recordPath, stateOf } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

interface ArchiveJson {
  archive: { path: string; sessions: string[] } | null
  removed: { id: string }[]
  kept: { id: string; reasons: { code: string }[] }[]
}

// Each run commits a file of its own on the session's branch (a run-end checkpoint each).
const WORK =
  'echo "$HARNESS_SESSION_ID $(date +%s%N)" >> "f-$HARNESS_SESSION_ID"; git add -A; git commit -qm work'

test('archive and unarchive: 3 sessions round trip; dry run, corrupt archives and a failed write change nothing', async () => {
  const repo = tmpGitRepo()
  const opts = { cwd: repo.dir, env: repo.env }
  const ids = ['arc1', 'arc2', 'arc3']
  for (const id of ids) await finishedSession(repo, WORK, ['--session-id', id])
  const resumed = await cli(['session', 'resume', 'arc1', '--json'], opts)
  expect(resumed.exitCode, resumed.stderr).toBe(0)
  await finishedSession(repo, 'echo uncommitted > dirty.txt', ['--session-id', 'dirty'])
  for (const id of ids) repo.git('merge', '-q', '--no-edit', `harness/${id}`)
  mkdirSync(join(repo.dir, '.harness', 'agents', 'arc2'), { recursive: true, mode: 0o700 })
  writeFileSync(join(repo.dir, '.harness', 'agents', 'arc2', 'history.md'), '# chat\n')
  const before = {
    records: ids.map((id) => readFileSync(recordPath(repo, id))),
    logs: ids.map((id) => readFileSync(logPath(repo, id))),
    refs: repo.git('for-each-ref', 'refs/heads/harness/', 'refs/harness/'),
  }
  expect(before.refs.match(/checkpoints/g)).toHaveLength(5) // arc1 has two runs
  const outDir = join(repo.dir, '..', 'archives')

  // --dry-run: the plan, and nothing written anywhere.
  const untouched = stateOf(repo)
  const dry = await cli(
    ['session', 'archive', '--older-than', '0', '--output', outDir, '--dry-run', '--json'],
    opts,
  )
  expect(dry.exitCode, dry.stderr).toBe(0)
  expect(json<ArchiveJson>(dry).archive?.sessions.sort()).toEqual(ids)
  expect(stateOf(repo)).toBe(untouched)
  expect(existsSync(outDir)).toBe(false)

  // A write that fails removes nothing.
  writeFileSync(join(repo.dir, '..', 'not-a-dir'), '')
  const failed = await cli(
    ['session', 'archive', '--older-than', '0', '--output', join(repo.dir, '..', 'not-a-dir')],
    opts,
  )
  expect(failed.exitCode).not.toBe(0)
  expect(stateOf(repo)).toBe(untouched)

  const done = await cli(['session', 'archive', '--older-than', '0', '--output', outDir, '--json'], opts)
  expect(done.exitCode, done.stderr).toBe(0)
  const report = json<ArchiveJson>(done)
  expect(report.removed.map((r) => r.id).sort()).toEqual(ids)
  expect(report.kept).toMatchObject([{ id: 'dirty', reasons: [{ code: 'DIRTY' }] }])
  const archive = report.archive?.path as string
  expect(readdirSync(outDir)).toEqual([archive.slice(outDir.length + 1)])
  for (const id of ids) {
    expect(existsSync(recordPath(repo, id))).toBe(false)
    expect(existsSync(logPath(repo, id))).toBe(false)
    expect(existsSync(join(repo.dir, '.harness', 'worktrees', id))).toBe(false)
  }
  expect(repo.git('for-each-ref', 'refs/heads/harness/', 'refs/harness/')).not.toMatch(/arc/)
  // Only the archive holds the checkpoint commits now.
  repo.git('reflog', 'expire', '--expire=now', '--all')
  repo.git('gc', '-q', '--prune=now')

  // One flipped byte, or a truncated file: reported, nothing restored.
  const bytes = readFileSync(archive)
  const flipped = join(outDir, 'flipped.tar.gz')
  const copy = Buffer.from(bytes)
  const middle = Math.floor(copy.length / 2)
  copy[middle] = (copy[middle] as number) ^ 0xff
  writeFileSync(flipped, copy)
  const truncated = join(outDir, 'truncated.tar.gz')
  writeFileSync(truncated, bytes.subarray(0, bytes.length - 40))
  const archived = stateOf(repo)
  for (const bad of [flipped, truncated]) {
    const result = await cli(['session', 'unarchive', bad], opts)
    expect(result.exitCode, result.stderr).toBe(1)
    expect(result.stderr).toMatch(/^harness: .* is not a good archive: /m)
    expect(stateOf(repo)).toBe(archived)
  }

  const restored = await cli(['session', 'unarchive', archive, '--json'], opts)
  expect(restored.exitCode, restored.stderr).toBe(0)
  ids.forEach((id, i) => {
    expect(readFileSync(recordPath(repo, id)).equals(before.records[i] as Buffer)).toBe(true)
    expect(readFileSync(logPath(repo, id)).equals(before.logs[i] as Buffer)).toBe(true)
  })
  expect(readFileSync(join(repo.dir, '.harness', 'agents', 'arc2', 'history.md'), 'utf8')).toBe('# chat\n')
  expect(repo.git('for-each-ref', 'refs/heads/harness/', 'refs/harness/')).toBe(before.refs)
  // An id that exists is refused.
  const again = await cli(['session', 'unarchive', archive, 'arc2'], opts)
  expect(again.exitCode).toBe(4)

  const resume = await cli(['session', 'resume', 'arc3', '--json'], opts)
  expect(resume.exitCode, resume.stderr).toBe(0)
  const worktree = json<{ worktree_dir: string }>(resume).worktree_dir
  expect(existsSync(join(worktree, 'f-arc3'))).toBe(true)
}, 300_000)
