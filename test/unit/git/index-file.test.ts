import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { parseIndexSummary } from '../../../src/git/index-file.js'
import { tmpGitRepo } from '../../helpers/tmp.js'

test('the index summary agrees with git: cache-tree root, hidden-edit flags, conflicts, and what it leaves to git', () => {
  const repo = tmpGitRepo()
  repo.write('a/one.txt', '1\n')
  repo.write('b.txt', 'b\n')
  repo.git('add', '-A')
  repo.git('commit', '-qm', 'two')
  const summary = () => parseIndexSummary(readFileSync(join(repo.dir, '.git', 'index')), 20)
  // After a commit the cache-tree is valid: its root is HEAD's tree and write-tree's answer.
  expect(summary()).toEqual({
    flagged: false,
    conflicted: false,
    rootTree: repo.git('rev-parse', 'HEAD^{tree}'),
  })
  // A staged change invalidates the root; nothing is made up.
  repo.write('b.txt', 'changed\n')
  repo.git('add', 'b.txt')
  expect(summary()?.rootTree).toBeNull()
  repo.git('write-tree')
  expect(summary()?.rootTree).toBe(repo.git('write-tree'))
  // Flags that hide edits are seen (assume-unchanged; skip-worktree is an extended flag, index v3).
  repo.git('update-index', '--assume-unchanged', 'b.txt')
  expect(summary()?.flagged).toBe(true)
  repo.git('update-index', '--no-assume-unchanged', 'b.txt')
  repo.git('update-index', '--skip-worktree', 'a/one.txt')
  expect(summary()).toMatchObject({ flagged: true, conflicted: false })
  repo.git('update-index', '--no-skip-worktree', 'a/one.txt')
  // A conflict stage.
  repo.git('commit', '-qm', 'b changed')
  repo.git('switch', '-qc', 'other', 'HEAD~1')
  repo.write('b.txt', 'other\n')
  repo.git('commit', '-qam', 'other b')
  try {
    repo.git('merge', '-q', 'main')
  } catch {
    // the conflict is the point
  }
  expect(summary()?.conflicted).toBe(true)
  // Version 4 and foreign bytes are left to git.
  repo.git('merge', '--abort')
  repo.git('update-index', '--index-version', '4')
  expect(summary()).toBeNull()
  writeFileSync(join(repo.dir, 'junk'), 'not an index')
  expect(parseIndexSummary(readFileSync(join(repo.dir, 'junk')), 20)).toBeNull()
})
