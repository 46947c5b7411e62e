import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { recordPath } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

interface Candidate {
  id: string
  problems: { kind: string; n?: number; repairable: boolean }[]
  corrupt?: { path: string; reason: string }
}

describe('recover: integrity', () => {
  test('a deleted checkpoint ref and a removed worktree are repaired from the record', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo work > work.txt')
    const checkpoints = session.checkpoints as { n: number; ref: string; commit: string }[]
    expect(checkpoints).toHaveLength(1)
    const checkpoint = checkpoints[0] as { ref: string; commit: string }
    repo.git('update-ref', '-d', checkpoint.ref)
    rmSync(session.worktree_dir, { recursive: true, force: true })
    const h = (...args: string[]) => cli(args, { cwd: repo.dir, env: repo.env })

    const scan = json<Candidate[]>(await h('session', 'recover', '--scan', '--json'))
    expect(scan.map((c) => [c.id, c.problems.map((p) => [p.kind, p.repairable])])).toEqual([
      [
        session.id,
        [
          ['checkpoint-ref-missing', true],
          ['worktree-missing', true],
        ],
      ],
    ])
    expect((await h('session', 'recover', '--scan')).stdout).toContain('[repairable]')

    const recover = await h('session', 'recover', session.id, '--json')
    expect(recover.exitCode, recover.stderr).toBe(0)
    const what = json<{ repaired: { id: string; what: string[] }[] }>(recover).repaired[0]?.what
    expect(what).toHaveLength(2)
    expect(what?.[1]).toBe(
      `worktree ${session.worktree_dir} recreated from branch ${session.git_branch}, with the files of checkpoint 0`,
    )
    expect(repo.git('rev-parse', checkpoint.ref)).toBe(checkpoint.commit)
    // Checked out again from its branch, with the work the run left uncommitted (its run-end checkpoint), as
    // resume would (test/e2e/resume-recreate.test.ts).
    expect(repo.git('-C', session.worktree_dir, 'symbolic-ref', '--short', 'HEAD')).toBe(session.git_branch)
    expect(readFileSync(join(session.worktree_dir, 'work.txt'), 'utf8')).toBe('work\n')
    expect(repo.git('-C', session.worktree_dir, 'status', '--porcelain')).toBe('?? work.txt')
    expect(json<Candidate[]>(await h('session', 'recover', '--scan', '--json'))).toEqual([])
    // Nothing left to do: exit 4.
    expect((await h('session', 'recover', session.id)).exitCode).toBe(4)
    // A worktree switched to another branch is reported, not changed.
    repo.git('-C', session.worktree_dir, 'switch', '-q', '-c', 'elsewhere')
    const switched = json<Candidate[]>(await h('session', 'recover', '--scan', '--json'))
    expect(switched[0]?.problems).toEqual([
      expect.objectContaining({ kind: 'worktree-wrong-branch', repairable: false }),
    ])
  })

  test('an unrepairable corrupt record moves to .harness/corrupt/ with its report, and listings stop warning', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    const path = recordPath(repo, session.id)
    const garbage = '{"id": "half a record\u001b[31m'
    writeFileSync(path, garbage)
    const h = (...args: string[]) => cli(args, { cwd: repo.dir, env: repo.env })
    expect((await h('session', 'list')).stderr).toContain(path)

    const scan = json<Candidate[]>(await h('session', 'recover', '--scan', '--json'))
    expect(scan).toEqual([
      expect.objectContaining({ id: session.id, corrupt: expect.objectContaining({ path }) }),
    ])
    const all = await h('session', 'recover', '--all', '--json')
    expect(all.exitCode, all.stderr).toBe(0)
    const corruptDir = join(repo.dir, '.harness', 'corrupt')
    const name = `${session.id}.json`
    expect(json<{ quarantined: unknown[] }>(all).quarantined).toEqual([
      { path, moved_to: join(corruptDir, name), report: join(corruptDir, `${name}.report.txt`) },
    ])
    expect(existsSync(path)).toBe(false)
    expect(readFileSync(join(corruptDir, name), 'utf8')).toBe(garbage)
    const report = readFileSync(join(corruptDir, `${name}.report.txt`), 'utf8')
    expect(report).toMatch(/reason: not valid JSON/)
    expect(report).toContain(`size: ${Buffer.byteLength(garbage)} bytes`)
    expect(report).toMatch(/mtime: \d{4}-/)
    expect(report).toContain('half a record\\x1b[31m')
    expect(report).not.toContain('\u001b')

    const list = await h('session', 'list')
    expect(list.exitCode).toBe(0)
    expect(list.stderr).toBe('')
    expect(readdirSync(corruptDir).sort()).toEqual([name, `${name}.report.txt`])
  })

  test('a symlinked .harness/corrupt is refused and the record stays where it is', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    writeFileSync(recordPath(repo, session.id), 'nope')
    const elsewhere = join(repo.dir, '..', 'elsewhere')
    const { mkdirSync, symlinkSync } = await import('node:fs')
    mkdirSync(elsewhere)
    symlinkSync(elsewhere, join(repo.dir, '.harness', 'corrupt'))
    const all = await cli(['session', 'recover', '--all'], { cwd: repo.dir, env: repo.env })
    expect(all.exitCode).toBe(4)
    expect(all.stderr).toContain('symlink')
    expect(readFileSync(recordPath(repo, session.id), 'utf8')).toBe('nope')
    expect(readdirSync(elsewhere)).toEqual([])
  })
})
