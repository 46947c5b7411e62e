import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { sessionRecord } from '../fixtures/records.js'
import { cli } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { recordPath, setLastActive, writeRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

const DAY = 24 * 60 * 60 * 1000

/** The test environment with auto cleanup on (the helpers turn it off for every other test). */
function autoOn(repo: TmpRepo): NodeJS.ProcessEnv {
  const env = { ...repo.env }
  delete env.HARNESS_AUTO_CLEANUP
  return env
}

/**
 * Waits until the auto-cleanup log holds `count` finished runs (the detached child's own last line). The
 * child runs at nice 10: on a loaded machine it may take long, hence the generous ceiling.
 */
async function finishedRuns(log: string, count: number): Promise<string> {
  for (let i = 0; i < 1200; i++) {
    const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
    if ((text.match(/ (done|failed): /g) ?? []).length >= count) return text
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(
    `the auto cleanup did not finish ${count} time(s):\n${existsSync(log) ? readFileSync(log, 'utf8') : '(no log)'}`,
  )
}

test('cleanup.auto: run starts it in the background once a day; it keeps dirty, unmerged and foreign sessions and logs', async () => {
  const repo = tmpGitRepo()
  const clean = await finishedSession(repo, 'true')
  const dirty = await finishedSession(repo, 'echo wip > wip.txt')
  const unmerged = await finishedSession(repo, 'echo done > done.txt; git add -A; git commit -qm done')
  writeRecord(repo.dir, repo.env, sessionRecord('foreign1', { worktree_dir: join(repo.dir, 'elsewhere') }), {
    seal: false,
  })
  for (const s of [clean, dirty, unmerged]) setLastActive(repo, s.id, 40 * DAY)
  const stamp = join(repo.dir, '.harness', 'auto-cleanup.stamp')
  const log = join(repo.dir, '.harness', 'auto-cleanup.log')
  expect(existsSync(stamp)).toBe(false)

  const env = autoOn(repo)
  const first = await cli(['run', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env })
  expect(first.exitCode, first.stderr).toBe(0)
  const claimed = readFileSync(stamp, 'utf8')
  const text = await finishedRuns(log, 1)
  expect(text).toMatch(
    new RegExp(
      `removed ${clean.id} \\(COMPLETED, last active .*\\): worktree, branch harness/${clean.id}, log, record`,
    ),
  )
  expect(text).toMatch(new RegExp(`kept ${dirty.id} \\(COMPLETED\\): DIRTY: `))
  expect(text).toMatch(new RegExp(`kept ${unmerged.id} \\(COMPLETED\\): UNMERGED: `))
  expect(text).toMatch(/kept foreign1 \(COMPLETED\): FOREIGN: /)
  expect(text).toMatch(/done: removed 1, kept 3$/m)
  expect(existsSync(recordPath(repo, clean.id))).toBe(false)
  for (const id of [dirty.id, unmerged.id, 'foreign1']) expect(existsSync(recordPath(repo, id))).toBe(true)

  // The same day: the turn is taken, no second cleanup starts (the stamp, written before any start, is as it was).
  const second = await cli(['run', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env })
  expect(second.exitCode, second.stderr).toBe(0)
  expect(readFileSync(stamp, 'utf8')).toBe(claimed)
  expect(readFileSync(log, 'utf8').match(/ started, /g)).toHaveLength(1)

  // A day later it runs again.
  writeFileSync(stamp, JSON.stringify({ at: new Date(Date.now() - DAY - 60_000).toISOString() }))
  const third = await cli(['run', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env })
  expect(third.exitCode, third.stderr).toBe(0)
  expect(readFileSync(stamp, 'utf8')).not.toBe(claimed)
  expect(await finishedRuns(log, 2)).toMatch(/done: removed 0, kept 3\n$/)
}, 400_000)

test('cleanup.auto: false turns it off', async () => {
  const repo = tmpGitRepo()
  const env = autoOn(repo)
  mkdirSync(join(repo.home, '.config', 'harness'), { recursive: true })
  writeFileSync(join(repo.home, '.config', 'harness', 'config.json'), '{"cleanup": {"auto": false}}')
  const run = await cli(['run', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env })
  expect(run.exitCode, run.stderr).toBe(0)
  // The stamp is taken before a cleanup could start: without it, none did.
  expect(existsSync(join(repo.dir, '.harness', 'auto-cleanup.stamp'))).toBe(false)
  const bad = await cli(['config', 'set', '--user', 'cleanup.auto', 'sometimes'], { cwd: repo.dir, env })
  expect(bad.exitCode).toBe(2)
})
