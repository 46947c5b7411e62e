import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import type { SessionJson } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

/**
 * Resume of a session whose worktree folder was deleted (issue 37): it comes back with the work the run left
 * uncommitted (the run-end checkpoint), or from that checkpoint when the branch is gone too; `session path`'s
 * hint says exactly what resume then does.
 */

const harness = (repo: TmpRepo, ...args: string[]) => cli(args, { cwd: repo.dir, env: repo.env })

/**
 * A session whose first run leaves uncommitted work (a new file, an edit); a resume (the same command again,
 * without FIRST) changes nothing, so whatever is there afterwards came back from the checkpoint.
 */
async function sessionWithWork(repo: TmpRepo): Promise<SessionJson> {
  const run = await cli(
    [
      'run',
      '-a',
      'exec',
      '--json',
      '--',
      'sh',
      '-c',
      '[ -z "$FIRST" ] || { echo wip > wip.txt; echo more >> README.md; }',
    ],
    { cwd: repo.dir, env: { ...repo.env, FIRST: '1' } },
  )
  expect(run.exitCode, run.stderr).toBe(0)
  const session = json<SessionJson>(run)
  expect(session.checkpoints).toMatchObject([{ n: 0, trigger: 'run-end' }])
  return session
}

describe('resume of a session whose worktree was deleted', () => {
  test('its uncommitted work comes back from the run-end checkpoint, and resume says so', async () => {
    const repo = tmpGitRepo()
    const session = await sessionWithWork(repo)
    rmSync(session.worktree_dir, { recursive: true, force: true })
    const path = await harness(repo, 'session', 'path', session.id)
    expect(path.exitCode).toBe(4)
    expect(path.stderr).toContain(
      `hint: "harness session resume ${session.id}" recreates it from its branch ${session.git_branch}, with the files of checkpoint 0 (run-end, `,
    )
    const resume = await harness(repo, 'session', 'resume', session.id)
    expect(resume.exitCode, resume.stderr).toBe(0)
    expect(resume.stderr).toContain(
      `harness: recreated worktree ${session.worktree_dir} from its branch ${session.git_branch}, with the files of checkpoint 0 (run-end, `,
    )
    expect(readFileSync(join(session.worktree_dir, 'wip.txt'), 'utf8')).toBe('wip\n')
    expect(readFileSync(join(session.worktree_dir, 'README.md'), 'utf8')).toBe('# test repo\nmore\n')
    // Still uncommitted, on the branch as it was.
    expect(repo.git('-C', session.worktree_dir, 'status', '--porcelain')).toBe('M README.md\n?? wip.txt')
    expect((await harness(repo, 'session', 'path', session.id)).stdout).toBe(`${session.worktree_dir}\n`)
  })

  test('worktree and branch gone: path says resume recreates both from the checkpoint, and resume does', async () => {
    const repo = tmpGitRepo()
    const session = await sessionWithWork(repo)
    rmSync(session.worktree_dir, { recursive: true, force: true })
    repo.git('worktree', 'prune')
    repo.git('branch', '-D', String(session.git_branch))
    const path = await harness(repo, 'session', 'path', session.id)
    expect(path.stderr).toContain(
      `hint: "harness session resume ${session.id}" recreates it and its branch ${session.git_branch} (gone too) from checkpoint 0 (run-end, `,
    )
    const resume = await harness(repo, 'session', 'resume', session.id)
    expect(resume.exitCode, resume.stderr).toBe(0)
    expect(resume.stderr).toContain(`harness: recreated worktree ${session.worktree_dir} and its branch`)
    expect(repo.git('rev-parse', String(session.git_branch))).toBe(repo.git('rev-parse', 'main'))
    expect(readFileSync(join(session.worktree_dir, 'wip.txt'), 'utf8')).toBe('wip\n')
    expect(repo.git('-C', session.worktree_dir, 'status', '--porcelain')).toBe('M README.md\n?? wip.txt')
  })

  test('nothing left to recreate it from: path says so, and resume refuses with the same reason', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    expect(session.checkpoints).toEqual([])
    rmSync(session.worktree_dir, { recursive: true, force: true })
    repo.git('worktree', 'prune')
    repo.git('branch', '-D', String(session.git_branch))
    const why = `its branch ${session.git_branch} is gone too, and no checkpoint of it remains`
    const path = await harness(repo, 'session', 'path', session.id)
    expect(path.exitCode).toBe(4)
    expect(path.stderr).toContain(`hint: harness cannot recreate it: ${why}`)
    expect(path.stderr).not.toContain('resume')
    const resume = await harness(repo, 'session', 'resume', session.id)
    expect(resume.exitCode).toBe(4)
    expect(resume.stderr).toContain(`harness: session "${session.id}" cannot be resumed: its worktree`)
    expect(resume.stderr).toContain(why)
    expect(existsSync(session.worktree_dir)).toBe(false)
  })
})

describe('the end of a foreground resume', () => {
  test('a summary line on stderr: <id>: <time the agent ran>, <cost>, <n> files; never on --json stdout', async () => {
    const repo = tmpGitRepo()
    const session = await sessionWithWork(repo)
    const resume = await harness(repo, 'session', 'resume', session.id)
    expect(resume.exitCode, resume.stderr).toBe(0)
    const last = resume.stderr.trimEnd().split('\n').at(-1)
    expect(last).toMatch(new RegExp(`^${session.id}: \\d+(ms|s|m \\d+s), no cost reported, 2 files$`))
    const asJson = await harness(repo, 'session', 'resume', session.id, '--json')
    expect(json<SessionJson>(asJson).runs).toHaveLength(3)
    expect(asJson.stderr.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^${session.id}: .*, 2 files$`))
    const viaRun = await harness(repo, 'run', '--session-id', session.id)
    expect(viaRun.stderr.trimEnd().split('\n').at(-1)).toMatch(new RegExp(`^${session.id}: .*, 2 files$`))
  })
})
