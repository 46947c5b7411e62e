import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpDir, tmpGitRepo, tmpUserIn } from '../helpers/tmp.js'

/**
 * git runs only where it belongs (SPEC §10, "By construction"; docs/security.md, "git"): never in a
 * folder a foreign record names, and in a session's worktree only while its `.git` names its own registration.
 * Each hostile tree below is what a clone or an unpacked tarball gives the user; the proof that nothing ran is
 * a marker file the attacker's command would have written.
 */

const OLD = '2025-01-01T10:00:00.000Z'

function userSpace() {
  const root = tmpDir()
  const { env, git } = tmpUserIn(root)
  return { root, env, git, pwned: join(root, 'pwned') }
}

function foreignRecord(id: string, extra: Record<string, unknown>): string {
  return JSON.stringify(
    {
      id,
      provider: 'claude',
      permission: 'supervised',
      status: 'COMPLETED',
      is_worktree: true,
      created_at: OLD,
      completed_at: OLD,
      ...extra,
    },
    null,
    2,
  )
}

describe('diff of a foreign record runs no git where it points', () => {
  test('an embedded bare repository with a textconv driver, shipped by a clone', async () => {
    const { root, env, git, pwned } = userSpace()
    // The attacker's bare repository, with two commits and a textconv driver for every file.
    const scratch = join(root, 'scratch')
    mkdirSync(scratch)
    git(scratch, 'init', '-q')
    writeFileSync(join(scratch, 'a.txt'), 'one\n')
    git(scratch, 'add', '-A')
    git(scratch, 'commit', '-q', '-m', 'one')
    const base = git(scratch, 'rev-parse', 'HEAD')
    writeFileSync(join(scratch, 'a.txt'), 'two\n')
    git(scratch, 'commit', '-q', '-am', 'two')
    const origin = join(root, 'origin')
    mkdirSync(origin)
    git(origin, 'init', '-q')
    git(root, 'clone', '-q', '--bare', scratch, join(origin, 'evil'))
    writeFileSync(
      join(origin, 'evil', 'config'),
      `${readFileSync(join(origin, 'evil', 'config'), 'utf8')}[diff "evil"]\n\ttextconv = "sh -c 'echo textconv > ${pwned}; cat \\"$1\\"' -"\n[core]\n\tfsmonitor = "sh -c 'echo fsmonitor > ${pwned}'"\n`,
    )
    mkdirSync(join(origin, 'evil', 'info'), { recursive: true })
    writeFileSync(join(origin, 'evil', 'info', 'attributes'), '* diff=evil\n')
    // The record names the embedded repository by a relative path, so it works wherever it is cloned.
    mkdirSync(join(origin, '.harness', 'sessions'), { recursive: true })
    writeFileSync(
      join(origin, '.harness', 'sessions', 'evil0001.json'),
      foreignRecord('evil0001', {
        worktree_dir: 'evil/missing',
        base_dir: 'evil',
        git_branch: 'main',
        base_commit: base,
      }),
    )
    git(origin, 'add', '-A')
    git(origin, 'add', '-f', '.harness')
    git(origin, 'commit', '-q', '-m', 'a project')
    const clone = join(root, 'clone')
    git(root, 'clone', '-q', origin, clone)
    expect(existsSync(join(clone, 'evil', 'objects'))).toBe(true)

    const diff = await cli(['--json', 'session', 'diff', 'evil0001'], { cwd: clone, env })
    expect(existsSync(pwned)).toBe(false)
    expect(diff.exitCode).toBe(4)
    expect(
      json<{ error: { code: string; message: string } }>({ ...diff, stdout: diff.stderr }).error,
    ).toMatchObject({
      code: 'FOREIGN',
    })
    expect(diff.stderr).toContain('never runs git where it points')
    expect(diff.stdout).toBe('')
    // The record is still shown.
    const show = await cli(['--json', 'session', 'show', 'evil0001'], { cwd: clone, env })
    expect(show.exitCode).toBe(0)
    expect(json<{ sealed: boolean }>(show).sealed).toBe(false)
    expect(existsSync(pwned)).toBe(false)
  })

  test('a nested .git with core.fsmonitor and a clean filter, from an unpacked tarball', async () => {
    const { root, env, git, pwned } = userSpace()
    const tree = join(root, 'tree')
    const nested = join(tree, 'vendor', 'lib')
    mkdirSync(nested, { recursive: true })
    git(nested, 'init', '-q')
    writeFileSync(join(nested, 'a.txt'), 'one\n')
    git(nested, 'add', '-A')
    git(nested, 'commit', '-q', '-m', 'one')
    const base = git(nested, 'rev-parse', 'HEAD')
    writeFileSync(
      join(nested, '.git', 'config'),
      `${readFileSync(join(nested, '.git', 'config'), 'utf8')}[core]\n\tfsmonitor = "sh -c 'echo fsmonitor >> ${pwned}'"\n[filter "evil"]\n\tclean = "sh -c 'echo clean >> ${pwned}; cat'"\n`,
    )
    writeFileSync(join(nested, '.gitattributes'), '* filter=evil\n')
    writeFileSync(join(nested, 'b.txt'), 'untracked\n')
    mkdirSync(join(tree, '.harness', 'sessions'), { recursive: true })
    writeFileSync(
      join(tree, '.harness', 'sessions', 'tar00001.json'),
      foreignRecord('tar00001', {
        worktree_dir: 'vendor/lib',
        base_dir: 'vendor/lib',
        git_branch: 'main',
        base_commit: base,
      }),
    )
    const tarball = join(root, 'project.tar')
    execFileSync('tar', ['-cf', tarball, '-C', tree, '.'])
    const project = join(root, 'unpacked')
    mkdirSync(project)
    execFileSync('tar', ['-xf', tarball, '-C', project])

    const diff = await cli(['session', 'diff', '--stat', 'tar00001'], { cwd: project, env })
    expect(existsSync(pwned)).toBe(false)
    expect(diff.exitCode).toBe(4)
    expect(diff.stderr).toMatch(/^harness: session "tar00001" is foreign \(it carries no seal/)
    expect(diff.stdout).toBe('')
  })
})

describe('a verified session whose worktree .git was rewritten', () => {
  async function finishedSession() {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const run = await cli(['run', '-a', 'claude', '--json', 'change a file'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(run.exitCode).toBe(0)
    const record = json<{ id: string; worktree_dir: string }>(run)
    const wt = record.worktree_dir
    writeFileSync(join(wt, 'work.txt'), "the session's work\n")
    execFileSync('git', ['add', 'work.txt'], { cwd: wt, env: repo.env })
    execFileSync('git', ['commit', '-q', '-m', 'work'], { cwd: wt, env: repo.env })
    const checkpoint = await cli(['session', 'checkpoint', record.id], { cwd: repo.dir, env: repo.env })
    expect(checkpoint.exitCode).toBe(0)
    writeFileSync(join(wt, 'work.txt'), 'more work after the checkpoint\n')
    // The user's own work in the main checkout: a staged file and a branch tip that must not move.
    repo.write('mine.txt', 'staged by the user\n')
    repo.git('add', 'mine.txt')
    const user = () => ({
      main: repo.git('rev-parse', 'refs/heads/main'),
      index: repo.git('ls-files', '--stage'),
      status: repo.git('status', '--porcelain'),
    })
    // The worktree's .git now points at the main repository itself: git there would act on the user's branch.
    writeFileSync(join(record.worktree_dir, '.git'), `gitdir: ${join(repo.dir, '.git')}\n`)
    return { repo, id: record.id, user }
  }

  test('restore refuses it and leaves the main branch and index alone', async () => {
    const { repo, id, user } = await finishedSession()
    const before = user()
    const restore = await cli(['--json', 'session', 'restore', id, '0'], { cwd: repo.dir, env: repo.env })
    expect(user()).toEqual(before)
    expect(restore.exitCode).toBe(4)
    expect(JSON.parse(restore.stderr).error.code).toBe('WORKTREE_NOT_OURS')
    expect(restore.stderr).toContain('not a registration under')
  })

  test('merge refuses it and leaves the main branch and index alone', async () => {
    const { repo, id, user } = await finishedSession()
    repo.git('commit', '-q', '-m', 'the user commits their staged file')
    const before = user()
    const merge = await cli(['--json', 'session', 'merge', id], { cwd: repo.dir, env: repo.env })
    expect(user()).toEqual(before)
    expect(merge.exitCode).toBe(4)
    expect(JSON.parse(merge.stderr).error.code).toBe('WORKTREE_NOT_OURS')
  })

  test('diff refuses it rather than diff the main checkout', async () => {
    const { repo, id } = await finishedSession()
    const diff = await cli(['--json', 'session', 'diff', id], { cwd: repo.dir, env: repo.env })
    expect(diff.exitCode).toBe(4)
    expect(JSON.parse(diff.stderr).error.code).toBe('WORKTREE_NOT_OURS')
  })
})
