import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpDir, tmpUserIn } from '../helpers/tmp.js'

/**
 * The project folder is the user's (SPEC §10, "By construction"; docs/security.md, "Walk-up"): the
 * walk up to `.harness` stops at the repository's top, and a `.harness` it finds must be owned by the user
 * and not writable by others. Planting one needs another user's files: the test runs as root (chown).
 */
const isRoot = process.getuid?.() === 0
const NOBODY = 65534

function hostileParent() {
  const root = tmpDir()
  const { env } = tmpUserIn(root)
  // Another user's world-writable .harness in a folder above the user's work (a shared /tmp, say).
  const shared = join(root, 'shared')
  const planted = join(shared, '.harness')
  mkdirSync(join(planted, 'sessions'), { recursive: true })
  for (const dir of [planted, join(planted, 'sessions')]) {
    chownSync(dir, NOBODY, NOBODY)
    chmodSync(dir, 0o777)
  }
  return { root, env, shared, planted }
}

describe.skipIf(!isRoot)('walk-up (needs root to plant another user’s folder)', () => {
  test('a .harness above the repository is not taken: the session stays in the repository', async () => {
    const { env, shared, planted } = hostileParent()
    const origin = join(shared, 'origin')
    mkdirSync(origin)
    execFileSync('git', ['init', '-q'], { cwd: origin, env })
    writeFileSync(join(origin, 'README.md'), 'project\n')
    execFileSync('git', ['add', '-A'], { cwd: origin, env })
    execFileSync('git', ['commit', '-q', '-m', 'project'], { cwd: origin, env })
    const repo = join(shared, 'repo')
    execFileSync('git', ['clone', '-q', origin, repo], { env })
    const agents = fakeAgents(join(shared, '..', 'home'), env)
    const run = await cli(['run', '-a', 'claude', '--json', 'task'], { cwd: repo, env: agents.env })
    expect(run.exitCode).toBe(0)
    const { id } = json<{ id: string }>(run)
    expect(readdirSync(join(planted, 'sessions'))).toEqual([])
    expect(existsSync(join(repo, '.harness', 'sessions', `${id}.json`))).toBe(true)
  })

  test("outside a repository, another user's world-writable .harness is refused (exit 4), naming it", async () => {
    const { env, shared, planted } = hostileParent()
    const work = join(shared, 'work')
    mkdirSync(work)
    const list = await cli(['--json', 'session', 'list'], { cwd: work, env })
    expect(list.exitCode).toBe(4)
    const error = JSON.parse(list.stderr).error
    expect(error.code).toBe('UNSAFE_PROJECT')
    expect(error.message).toContain(`${planted} belongs to another user (uid ${NOBODY})`)
    expect(readdirSync(join(planted, 'sessions'))).toEqual([])
  })

  test('a world-writable .harness of the user is refused too', async () => {
    const { env, shared, planted } = hostileParent()
    chownSync(planted, 0, 0)
    const work = join(shared, 'work')
    mkdirSync(work)
    const list = await cli(['session', 'list'], { cwd: work, env })
    expect(list.exitCode).toBe(4)
    expect(list.stderr).toContain(`${planted} is writable by every user (mode 777)`)
  })
})
