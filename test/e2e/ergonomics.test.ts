import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import type { SessionJson } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

const sessions = (dir: string) => {
  try {
    return readdirSync(join(dir, '.harness', 'sessions')).filter((f) => f.endsWith('.json'))
  } catch {
    return []
  }
}

describe("a newcomer's first hour", () => {
  test('a foreground run names its session on stderr before the agent starts; not under -q', async () => {
    const repo = tmpGitRepo()
    // Under --json the agent's output goes to stderr too, so the order of the two is visible.
    const run = await cli(['run', '-a', 'exec', '--json', '--', 'sh', '-c', 'echo AGENT-SAYS-HI >&2'], {
      cwd: repo.dir,
      env: repo.env,
    })
    const record = json<SessionJson>(run)
    const line = `harness: session ${record.id} in ${record.worktree_dir} (branch harness/${record.id})\n`
    expect(run.stderr).toContain(line)
    expect(run.stderr.indexOf(line)).toBeLessThan(run.stderr.indexOf('AGENT-SAYS-HI'))
    const quiet = await cli(['run', '-q', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env: repo.env })
    expect(quiet).toMatchObject({ exitCode: 0, stderr: '' })
  })

  test('a piped prompt is the task ("-" too); a headless start without one is a usage error', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const piped = await cli(['run', '-a', 'claude', '--json'], {
      cwd: repo.dir,
      env: agents.env,
      input: 'fix the tests\n',
    })
    expect(piped.exitCode, piped.stderr).toBe(0)
    expect(json<SessionJson>(piped).prompt).toBe('fix the tests')
    expect(agents.starts()[0]?.args).toContain('fix the tests')
    const dash = await cli(['run', '-a', 'claude', '--json', '-'], {
      cwd: repo.dir,
      env: agents.env,
      input: 'from a dash',
    })
    expect(json<SessionJson>(dash).prompt).toBe('from a dash')

    const before = sessions(repo.dir)
    for (const args of [
      ['run', '-a', 'claude'],
      ['run', '-a', 'claude', '--detach'],
    ]) {
      const none = await cli(args, { cwd: repo.dir, env: agents.env })
      expect(none.exitCode).toBe(2)
      expect(none.stdout).toBe('')
      expect(none.stderr).toContain('harness: agent "claude" runs without a terminal here and got no prompt')
      expect(none.stderr).toContain('echo "fix the tests" | harness run -a claude')
    }
    expect(sessions(repo.dir)).toEqual(before)
    expect(agents.starts()).toHaveLength(2)
  })

  test('exec sessions show their command as the task; TASK keeps its room beside a long branch', async () => {
    const repo = tmpGitRepo()
    await finishedSession(repo, 'echo built', [
      '--branch',
      'feature/a-very-long-branch-name-for-the-table-test',
    ])
    const list = await cli(['session', 'list'], { cwd: repo.dir, env: { ...repo.env, COLUMNS: '80' } })
    const row = list.stdout.split('\n')[1] ?? ''
    expect(row.length).toBeLessThanOrEqual(80)
    expect(row).toContain("sh -c 'echo built'")
  })

  test('diff of a --no-worktree session says what it compares', async () => {
    const repo = tmpGitRepo()
    const record = await finishedSession(repo, 'echo x > new.txt', ['--no-worktree'])
    const diff = await cli(['session', 'diff', record.id, '--stat'], { cwd: repo.dir, env: repo.env })
    expect(diff.exitCode).toBe(0)
    expect(diff.stdout).toContain('new.txt')
    expect(diff.stderr).toContain(`session ${record.id} ran in ${repo.dir} itself (no worktree)`)
    expect(diff.stderr).toContain('may include changes made by others')
  })

  test('a session command at the top level points at "harness session <name>"', async () => {
    const repo = tmpGitRepo()
    for (const [word, meant] of [
      ['ls', 'ls'],
      ['list', 'list'],
      ['ps', 'list'],
      ['kill', 'kill'],
    ]) {
      const result = await cli([word as string], { cwd: repo.dir, env: repo.env })
      expect(result.exitCode).toBe(2)
      expect(result.stderr).toBe(
        `harness: unknown command '${word}'\nhint: did you mean "harness session ${meant}"?\n`,
      )
    }
  })
})

test('config set keeps trust only where it was: a file it created is used, a hand-edited one stays refused', async () => {
  const repo = tmpGitRepo()
  const h = (args: string[]) => cli(args, { cwd: repo.dir, env: repo.env })
  expect(await h(['config', 'set', 'worktree.setup', 'echo set-up-ran'])).toMatchObject({ exitCode: 0 })
  const run = await h(['run', '-a', 'exec', '--', 'true'])
  expect(run.exitCode, run.stderr).toBe(0)
  expect(run.stderr).toContain('setup| set-up-ran')
  const file = join(repo.dir, '.harness', 'config.json')
  writeFileSync(file, readFileSync(file, 'utf8').replace('set-up-ran', 'changed-by-hand'))
  expect((await h(['config', 'set', 'defaults.agent', 'exec'])).exitCode).toBe(0)
  const refused = await h(['run', '-a', 'exec', '--', 'true'])
  expect(refused.exitCode).toBe(4)
  expect(refused.stderr).toContain('not trusted')
  const typo = await h(['config', 'get', 'worktree.stup'])
  expect(typo.exitCode).toBe(2)
  expect(typo.stderr).toContain('did you mean "worktree.setup"?')
})
