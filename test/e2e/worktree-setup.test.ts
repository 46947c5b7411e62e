import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { writeProjectConfig } from '../helpers/sessions.js'
import { projectEnv, tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; worktree_dir: string }

function configure(dir: string, config: unknown): void {
  writeProjectConfig(dir, projectEnv(dir), config)
}

function sessionFiles(dir: string): string[] {
  const sessions = join(dir, '.harness', 'sessions')
  return existsSync(sessions) ? readdirSync(sessions) : []
}

describe('worktree set-up', () => {
  test('worktree.include copies untracked files; worktree.setup runs in the new worktree first', async () => {
    const repo = tmpGitRepo()
    repo.write('.gitignore', '.env\nconfig/*.local.json\n')
    repo.git('add', '-A')
    repo.git('commit', '-qm', 'ignore')
    repo.write('.env', 'SECRET=1\n')
    repo.write('config/db.local.json', '{"db":1}\n')
    repo.write('config/other.json', 'not included\n')
    configure(repo.dir, {
      // Its environment is the caller's (HOME here is the test's own).
      worktree: {
        include: ['.env', 'config/*.local.json'],
        setup: 'echo "setup ran in $PWD for $HOME" > setup.txt',
      },
    })
    const agents = fakeAgents(repo.home, repo.env)
    const run = await cli(['run', '-a', 'claude', '--json', 'task'], { cwd: repo.dir, env: agents.env })
    expect(run.exitCode, run.stderr).toBe(0)
    const record = json<Rec>(run)
    expect(readFileSync(join(record.worktree_dir, '.env'), 'utf8')).toBe('SECRET=1\n')
    expect(readFileSync(join(record.worktree_dir, 'config', 'db.local.json'), 'utf8')).toBe('{"db":1}\n')
    expect(existsSync(join(record.worktree_dir, 'config', 'other.json'))).toBe(false)
    expect(readFileSync(join(record.worktree_dir, 'setup.txt'), 'utf8')).toBe(
      `setup ran in ${record.worktree_dir} for ${repo.home}\n`,
    )
    expect(agents.starts()).toHaveLength(1)
  })

  test('worktree.root places worktrees outside the repository', async () => {
    const repo = tmpGitRepo()
    configure(repo.dir, { worktree: { root: '../repo.worktrees' } })
    const agents = fakeAgents(repo.home, repo.env)
    const record = json<Rec>(
      await cli(['run', '-a', 'claude', '--json', 'task'], { cwd: repo.dir, env: agents.env }),
    )
    expect(record.worktree_dir).toBe(join(repo.dir, '..', 'repo.worktrees', record.id))
    // From inside that outside worktree, harness still finds the project.
    const path = await cli(['session', 'path', record.id], { cwd: record.worktree_dir, env: repo.env })
    expect(path.stdout).toBe(`${record.worktree_dir}\n`)
  })

  test('a failing setup fails the run with its output shown; nothing is left behind', async () => {
    const repo = tmpGitRepo()
    configure(repo.dir, {
      worktree: { setup: ['sh', '-c', 'echo installing; echo "npm ERR! missing lockfile" >&2; exit 9'] },
    })
    const agents = fakeAgents(repo.home, repo.env)
    const run = await cli(['run', '-a', 'claude', 'task'], { cwd: repo.dir, env: agents.env })
    expect(run.exitCode).toBe(5)
    // Streamed as it ran (prefixed), then the error, which does not print those lines again.
    expect(run.stderr).toContain('setup| installing\nsetup| npm ERR! missing lockfile\n')
    expect(run.stderr).toContain(
      'worktree setup failed (exit 9): sh -c'.concat(
        ' echo installing; echo "npm ERR! missing lockfile" >&2; exit 9\nhint: fix "worktree.setup" in .harness/config.json (its output is above)\n',
      ),
    )
    expect(run.stderr.match(/missing lockfile/g)).toHaveLength(2)
    // Under -q nothing was streamed: its last lines come under the error, each on its own line.
    const quiet = await cli(['-q', 'run', '-a', 'claude', 'task'], { cwd: repo.dir, env: agents.env })
    expect(quiet.exitCode).toBe(5)
    expect(quiet.stderr).not.toContain('setup|')
    expect(quiet.stderr).toContain('exit 9\n  | installing\n  | npm ERR! missing lockfile\nhint:')
    expect(agents.starts()).toHaveLength(0)
    expect(sessionFiles(repo.dir)).toEqual([])
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1)
  })

  test('Ctrl-C during set-up aborts cleanly: no half-made worktree, no branch, no record', async () => {
    const repo = tmpGitRepo()
    const marker = join(repo.home, 'setup-started')
    configure(repo.dir, { worktree: { setup: `touch '${marker}'; sleep 30` } })
    const agents = fakeAgents(repo.home, repo.env)
    const child = spawn(HARNESS_BIN, ['run', '-a', 'claude', 'task'], {
      cwd: repo.dir,
      env: agents.env,
      stdio: 'ignore',
    })
    await waitFor('the setup to start', () => existsSync(marker))
    child.kill('SIGINT')
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    )
    expect(signal ?? code).toBe(code === null ? 'SIGINT' : 130)
    expect(agents.starts()).toHaveLength(0)
    expect(sessionFiles(repo.dir)).toEqual([])
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1)
    expect(readdirSync(join(repo.dir, '.harness', 'worktrees'))).toEqual([])
  })
})
