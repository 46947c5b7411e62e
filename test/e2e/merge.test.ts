import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { readRecords } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

interface MergeJson {
  outcome: string
  strategy: string
  uncommitted: string[]
  commits: number
  conflicts: string[]
  refusals: { code: string }[]
  merge_commit: string | null
}

/** The main worktree as bytes: HEAD, the index file, and every file outside .git/.harness (path, mode, hash). */
function mainState(repo: TmpRepo): string {
  const lines = [repo.git('rev-parse', 'HEAD'), repo.git('symbolic-ref', 'HEAD')]
  lines.push(
    createHash('sha256')
      .update(readFileSync(join(repo.dir, '.git', 'index')))
      .digest('hex'),
  )
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (rel === '' && (name === '.git' || name === '.harness')) continue
      const path = join(dir, name)
      const stat = statSync(path)
      if (stat.isDirectory()) walk(path, `${rel}${name}/`)
      else
        lines.push(
          `${rel}${name} ${stat.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`,
        )
    }
  }
  walk(repo.dir, '')
  return lines.join('\n')
}

const merge = (repo: TmpRepo, ...args: string[]) =>
  cli(['session', 'merge', ...args], { cwd: repo.dir, env: repo.env })

describe('session merge', () => {
  test('dry run, then a merge commit of committed and uncommitted work; the record says so', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      'echo one > one.txt && git add one.txt && git commit -qm one && echo two > two.txt',
    )
    const before = mainState(repo)
    const dry = await merge(repo, session.id, '--dry-run', '--json')
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(json<MergeJson>(dry)).toMatchObject({
      outcome: 'would-merge',
      uncommitted: ['two.txt'],
      commits: 2,
      conflicts: [],
    })
    expect(mainState(repo)).toBe(before)

    const done = await merge(repo, session.id, '--json')
    expect(done.exitCode, done.stderr).toBe(0)
    const result = json<MergeJson>(done)
    expect(result).toMatchObject({ outcome: 'merged', strategy: 'merge' })
    expect(repo.git('rev-parse', 'HEAD')).toBe(result.merge_commit)
    expect(repo.git('rev-list', '--parents', '-n1', 'HEAD').split(' ')).toHaveLength(3)
    expect(readFileSync(join(repo.dir, 'two.txt'), 'utf8')).toBe('two\n')
    expect(repo.git('status', '--porcelain')).toBe('')
    // The session's branch got the uncommitted file as a commit; its worktree is clean.
    expect(repo.git('-C', session.worktree_dir, 'status', '--porcelain')).toBe('')
    const [record] = readRecords<{ merged_at: string; merge_commit: string }>(repo.dir)
    expect(record?.merge_commit).toBe(result.merge_commit)
    expect(record?.merged_at).toMatch(/Z$/)
  })

  test('--squash is one commit; afterwards cleanup removes the session without --force', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      'echo a > a.txt && git add a.txt && git commit -qm a && echo b > b.txt',
    )
    const done = await merge(repo, session.id, '--squash', '--json')
    expect(done.exitCode, done.stderr).toBe(0)
    expect(repo.git('rev-list', '--parents', '-n1', 'HEAD').split(' ')).toHaveLength(2)
    expect(repo.git('ls-tree', '--name-only', 'HEAD').split('\n')).toEqual(['README.md', 'a.txt', 'b.txt'])
    const cleanup = await cli(['session', 'cleanup', '--older-than', '0', '--json'], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(cleanup.exitCode, cleanup.stderr).toBe(0)
    expect(json<{ removed: { id: string }[] }>(cleanup).removed.map((r) => r.id)).toEqual([session.id])
    expect(repo.git('branch', '--list', String(session.git_branch))).toBe('')
  })

  test('--rebase replays the commits onto a base that moved on', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo s > s.txt && git add s.txt && git commit -qm s')
    repo.write('main.txt', 'main\n')
    repo.git('add', 'main.txt')
    repo.git('commit', '-qm', 'main moved')
    const done = await merge(repo, session.id, '--rebase', '--json')
    expect(done.exitCode, done.stderr).toBe(0)
    expect(repo.git('log', '--format=%s', '-3').split('\n')).toEqual(['s', 'main moved', 'initial'])
    expect(repo.git('rev-parse', String(session.git_branch))).toBe(repo.git('rev-parse', 'HEAD'))
  })

  test('refusals: dirty main worktree, wrong branch, conflicts (listed, main worktree byte-identical)', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo theirs > README.md && echo new > new.txt')
    // Dirty main worktree.
    writeFileSync(join(repo.dir, 'README.md'), 'local edit\n')
    const dirty = await merge(repo, session.id)
    expect(dirty.exitCode).toBe(4)
    expect(dirty.stderr).toMatch(
      /^harness: the main worktree .* has uncommitted changes \(1 file: README.md\)/,
    )
    repo.git('checkout', '--', 'README.md')
    // Wrong branch.
    repo.git('switch', '-q', '-c', 'other')
    const wrong = await merge(repo, session.id, '--json')
    expect(wrong.exitCode).toBe(4)
    expect(JSON.parse(wrong.stderr).error.code).toBe('WRONG_BRANCH')
    repo.git('switch', '-q', 'main')
    // A conflicting change on main; an untracked file too, which must stay as it is.
    repo.write('README.md', 'ours\n')
    repo.git('commit', '-qam', 'ours')
    repo.write('scratch.txt', 'untracked\n')
    const before = mainState(repo)
    const dry = await merge(repo, session.id, '--dry-run', '--json')
    expect(dry.exitCode).toBe(4)
    expect(json<MergeJson>(dry)).toMatchObject({ outcome: 'refused', conflicts: ['README.md'] })
    const conflict = await merge(repo, session.id)
    expect(conflict.exitCode).toBe(4)
    expect(conflict.stderr).toContain('would conflict in 1 file: README.md')
    expect(mainState(repo)).toBe(before)
    // Nothing was committed in the session's worktree either.
    expect(repo.git('-C', session.worktree_dir, 'status', '--porcelain')).toBe('M README.md\n?? new.txt')
    expect(readRecords<{ merged_at?: string }>(repo.dir)[0]?.merged_at ?? null).toBeNull()
  })
})
