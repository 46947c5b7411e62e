import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  type BigIntStats,
  chmodSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { provenCleanWorktrees, provenLayout } from '../../../src/git/clean-check.js'
import { parseIndex } from '../../../src/git/index-file.js'
import { cleanWorktrees } from '../../../src/git/worktree.js'
import { type TmpRepo, tmpGitRepo } from '../../helpers/tmp.js'

/**
 * The in-process cleanliness proof (src/git/clean-check.ts) against real git: it may only say "clean" where
 * `git status` finds nothing, and git stays the judge of everything it leaves.
 */

/** A repository whose commit holds nested folders, an executable, a symlink and an ignore rule. */
function fixtureRepo(): TmpRepo {
  const repo = tmpGitRepo()
  repo.write('a.txt', 'alpha\n')
  repo.write('dir/b.txt', 'bravo\n')
  repo.write('dir/sub/c.txt', 'charlie\n')
  repo.write('run.sh', '#!/bin/sh\n')
  chmodSync(join(repo.dir, 'run.sh'), 0o755)
  symlinkSync('a.txt', join(repo.dir, 'link'))
  repo.write('.gitignore', '*.log\n')
  repo.git('add', '-A')
  repo.git('commit', '-qm', 'fixture')
  return repo
}

let worktreeCount = 0

/**
 * A worktree on a new branch, settled: its files dated a few seconds back and its index refreshed, so that no
 * entry is racily clean (as after any `git status` run a second or more after the checkout).
 */
function addWorktree(repo: TmpRepo): string {
  const path = join(repo.dir, '..', `wt-${++worktreeCount}`)
  repo.git('worktree', 'add', '-q', '-b', `wt-${worktreeCount}`, path)
  settle(repo, path)
  return path
}

/** The fixture's files (a file git adds later keeps its own time, which only makes it racily clean). */
const FIXTURE_FILES = ['.gitignore', 'README.md', 'a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'link', 'run.sh']

function settle(repo: TmpRepo, path: string): void {
  const past = Date.now() / 1000 - 5
  for (const file of FIXTURE_FILES) {
    try {
      lutimesSync(join(path, file), past, past)
    } catch {
      // deleted by the test
    }
  }
  git(repo, path, 'update-index', '-q', '--refresh')
}

function git(repo: TmpRepo, cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: repo.env, encoding: 'utf8' })
}

function tracked(repo: TmpRepo, path: string): string[] {
  return git(repo, path, 'ls-files', '-z').split('\0').filter(Boolean)
}

/** What `cleanWorktrees` has always meant by clean: status prints nothing, no flagged entry, no gitlink. */
function gitSaysClean(repo: TmpRepo, path: string): boolean {
  const status = git(
    repo,
    path,
    '--no-optional-locks',
    'status',
    '--porcelain=v1',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=none',
  )
  const index = git(repo, path, 'ls-files', '-v', '-s', '-z').split('\0').filter(Boolean)
  return status === '' && !index.some((line) => /^(?:[a-z]|S) /.test(line) || /^\S+ 160000 /.test(line))
}

async function proven(repo: TmpRepo, path: string): Promise<boolean> {
  return (await provenCleanWorktrees(repo.dir, [path], { env: repo.env })).has(path)
}

function indexFile(repo: TmpRepo, path: string): string {
  return git(repo, path, 'rev-parse', '--path-format=absolute', '--git-path', 'index').trim()
}

/**
 * A same-size edit whose mtime is put back to what it was: only the ctime tells. harness compares times to the
 * nanosecond, so what its promise rests on is a fact of the file: the edit's ctime differs from the one the
 * index recorded. The kernel stamps files from a coarse clock (a tick of a few milliseconds), so the edit is
 * made again until the file's own ctime has moved. Whether git sees this edit depends on its build (whole
 * seconds without nanosecond support) and on its racy window, so the test does not ask git about it.
 */
function sneakyEdit(file: string, content: string): void {
  const before = statSync(file, { bigint: true })
  for (;;) {
    writeFileSync(file, content)
    utimesSync(file, before.atime, before.mtime)
    if (statSync(file, { bigint: true }).ctimeNs !== before.ctimeNs) return
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5)
  }
}

/** Dirt that git's own check may miss, depending on its build and timing (see `sneakyEdit`). */
const SEEN_BY_GIT_ONLY_SOMETIMES = new Set(['a same-size edit with its mtime put back'])

describe('parseIndex on indexes written by git', () => {
  test('version 2 and 3 are read entry by entry with the cache-tree root; 4, split and corrupt ones are not', () => {
    const repo = fixtureRepo()
    const file = join(repo.dir, '.git', 'index')
    const read = () => parseIndex(readFileSync(file), 20)
    const listed = repo
      .git('ls-files', '-s')
      .split('\n')
      .map((line) => {
        const [mode, oid, , path] = line.split(/\s+/)
        return { mode: Number.parseInt(mode ?? '', 8), oid, path }
      })
    const v2 = read()
    expect(v2?.version).toBe(2)
    expect(v2?.entries.map(({ mode, oid, path }) => ({ mode, oid, path }))).toEqual(listed)
    expect(v2?.root).toEqual({ oid: repo.git('rev-parse', 'HEAD^{tree}'), entries: listed.length })
    const a = v2?.entries.find((entry) => entry.path === 'a.txt')
    const st = lstatSync(join(repo.dir, 'a.txt'), { bigint: true })
    expect(a).toMatchObject({
      size: 6,
      ino: Number(st.ino & 0xffffffffn),
      mtimeSec: Number(st.mtimeNs / 1_000_000_000n),
    })

    // Version 3: an extended flag (skip-worktree) is read, and the entries after it still line up.
    repo.git('update-index', '--skip-worktree', 'dir/b.txt')
    const v3 = read()
    expect(v3?.version).toBe(3)
    expect(v3?.entries.find((entry) => entry.path === 'dir/b.txt')?.extendedFlags).not.toBe(0)
    expect(v3?.entries.map((entry) => entry.path)).toEqual(listed.map((entry) => entry.path))
    repo.git('update-index', '--no-skip-worktree', 'dir/b.txt')

    // An invalidated cache-tree gives no root.
    repo.write('a.txt', 'changed\n')
    repo.git('add', 'a.txt')
    expect(read()?.root).toBeNull()
    repo.git('reset', '-q')

    repo.git('update-index', '--index-version', '4')
    expect(read()).toBeNull()
    repo.git('update-index', '--index-version', '2')
    repo.git('update-index', '--split-index')
    expect(read()).toBeNull()
    repo.git('update-index', '--no-split-index')
    expect(read()).not.toBeNull()

    // One flipped byte fails the checksum.
    const bytes = readFileSync(file)
    bytes[20] = (bytes[20] ?? 0) ^ 1
    expect(parseIndex(bytes, 20)).toBeNull()
    expect(parseIndex(Buffer.from('DIRC not really'), 20)).toBeNull()
  })
})

describe('provenCleanWorktrees: no kind of dirt is ever called clean', () => {
  test('a settled worktree is proven clean, in one git process for all of them', async () => {
    const repo = fixtureRepo()
    const paths = [addWorktree(repo), addWorktree(repo)]
    const found = await provenCleanWorktrees(repo.dir, paths, { env: repo.env })
    expect([...found].sort()).toEqual(paths.sort())
  })

  const dirt: [string, (path: string, repo: TmpRepo) => void][] = [
    ['a same-size edit with its mtime put back', (p) => sneakyEdit(join(p, 'a.txt'), 'ALPHA\n')],
    ['a deleted file', (p) => unlinkSync(join(p, 'dir/sub/c.txt'))],
    ['a new untracked file', (p) => writeFileSync(join(p, 'dir/new.txt'), 'new\n')],
    [
      'an untracked file in a new folder',
      (p) => {
        mkdirSync(join(p, 'dir/sub/more'))
        writeFileSync(join(p, 'dir/sub/more/x'), '')
      },
    ],
    ['chmod +x', (p) => chmodSync(join(p, 'a.txt'), 0o755)],
    ['chmod -x', (p) => chmodSync(join(p, 'run.sh'), 0o644)],
    [
      'a symlink pointing elsewhere (same length)',
      (p) => {
        unlinkSync(join(p, 'link'))
        symlinkSync('run.sh', join(p, 'link'))
      },
    ],
    [
      'a file made a symlink',
      (p) => {
        unlinkSync(join(p, 'a.txt'))
        symlinkSync('run.sh', join(p, 'a.txt'))
      },
    ],
    [
      'a symlink made a file',
      (p) => {
        unlinkSync(join(p, 'link'))
        writeFileSync(join(p, 'link'), 'a.txt')
      },
    ],
    [
      'a folder made a symlink to a copy of itself',
      (p) => {
        execFileSync('cp', ['-a', join(p, 'dir'), join(p, '..', `moved-${worktreeCount}`)])
        rmSync(join(p, 'dir'), { recursive: true })
        symlinkSync(join(p, '..', `moved-${worktreeCount}`), join(p, 'dir'))
      },
    ],
    [
      'a staged change',
      (p, repo) => {
        writeFileSync(join(p, 'a.txt'), 'staged\n')
        git(repo, p, 'add', 'a.txt')
      },
    ],
    [
      'a staged change with a valid cache-tree (written tree differs from HEAD)',
      (p, repo) => {
        writeFileSync(join(p, 'a.txt'), 'staged\n')
        git(repo, p, 'add', 'a.txt')
        git(repo, p, 'write-tree')
        settle(repo, p)
      },
    ],
    [
      'a staged deletion',
      (p, repo) => {
        git(repo, p, 'rm', '-q', '--cached', 'a.txt')
        unlinkSync(join(p, 'a.txt'))
        git(repo, p, 'write-tree')
      },
    ],
    [
      'an intent-to-add entry',
      (p, repo) => {
        writeFileSync(join(p, 'planned.txt'), 'x\n')
        git(repo, p, 'add', '-N', 'planned.txt')
        settle(repo, p)
      },
    ],
    [
      'an edit hidden by assume-unchanged',
      (p, repo) => {
        git(repo, p, 'update-index', '--assume-unchanged', 'a.txt')
        writeFileSync(join(p, 'a.txt'), 'hidden\n')
      },
    ],
    [
      'an edit hidden by skip-worktree',
      (p, repo) => {
        git(repo, p, 'update-index', '--skip-worktree', 'a.txt')
        writeFileSync(join(p, 'a.txt'), 'hidden\n')
      },
    ],
    [
      'HEAD moved to another tree (the index still matches the old one)',
      (p, repo) => {
        const moved = git(repo, p, 'commit-tree', 'HEAD~1^{tree}', '-p', 'HEAD', '-m', 'moved').trim()
        git(repo, p, 'update-ref', 'HEAD', moved)
      },
    ],
  ]

  test('every kind of dirt, each in its own worktree, is not proven; git still finds each', {
    tags: ['process'],
  }, async () => {
    const repo = fixtureRepo()
    const cases = dirt.map(([name, makeDirty]) => ({ name, makeDirty, path: addWorktree(repo) }))
    const paths = cases.map((c) => c.path)
    expect((await provenCleanWorktrees(repo.dir, paths, { env: repo.env })).size).toBe(cases.length)
    for (const { path, makeDirty } of cases) makeDirty(path, repo)
    // The dirt is real: git finds every one whose visibility does not hang on git's build or timing.
    const gitClean = cases.filter((c) => gitSaysClean(repo, c.path)).map((c) => c.name)
    expect(gitClean.filter((name) => !SEEN_BY_GIT_ONLY_SOMETIMES.has(name))).toEqual([])
    const found = await provenCleanWorktrees(repo.dir, paths, { env: repo.env })
    // What harness promises: nothing git would see is called clean; and, stricter, no dirt at all is proven.
    expect(cases.filter((c) => found.has(c.path) && !gitClean.includes(c.name)).map((c) => c.name)).toEqual(
      [],
    )
    expect(cases.filter((c) => found.has(c.path)).map((c) => c.name)).toEqual([])
  })

  test('a checked-out submodule (gitlink) is left to git', async () => {
    const repo = fixtureRepo()
    repo.git('update-index', '--add', '--cacheinfo', `160000,${repo.git('rev-parse', 'HEAD')},mod`)
    repo.git('commit', '-qm', 'gitlink')
    const path = addWorktree(repo)
    expect(await proven(repo, path)).toBe(false)
    expect((await cleanWorktrees(repo.dir, [path], { env: repo.env })).has(path)).toBe(false)
  })

  test('an ignored file or an empty folder is not proven, and git still calls them clean as before', async () => {
    const repo = fixtureRepo()
    const ignored = addWorktree(repo)
    writeFileSync(join(ignored, 'dir', 'build.log'), 'noise\n')
    const empty = addWorktree(repo)
    mkdirSync(join(empty, 'empty'))
    for (const path of [ignored, empty]) {
      expect(gitSaysClean(repo, path)).toBe(true)
      expect(await proven(repo, path)).toBe(false)
    }
    const clean = await cleanWorktrees(repo.dir, [ignored, empty], { env: repo.env })
    expect([...clean].sort()).toEqual([ignored, empty].sort())
  })

  test('a worktree checked out this second is racily clean: left to git', async () => {
    const repo = fixtureRepo()
    const path = join(repo.dir, '..', 'fresh')
    repo.git('worktree', 'add', '-q', '-b', 'fresh', path)
    // Files and index written within the same second (retried in the rare case a second boundary fell between).
    for (let i = 0; i < 5; i++) {
      const index = lstatSync(indexFile(repo, path)).mtimeMs
      const newest = Math.max(...tracked(repo, path).map((f) => lstatSync(join(path, f)).mtimeMs))
      if (Math.floor(index / 1000) === Math.floor(newest / 1000)) break
      rmSync(join(path, 'a.txt'))
      git(repo, path, 'checkout', '--', 'a.txt')
    }
    expect(await proven(repo, path)).toBe(false)
    expect(gitSaysClean(repo, path)).toBe(true)
  })
})

/**
 * The racy case itself: an index whose entry has the file's exact stat data but another file content (what
 * a same-size edit in the very tick git recorded the file leaves). git trusts stat data only for entries
 * older than the index file, so it finds the edit; a check without the racy rule would not.
 */
describe('the racy rule', () => {
  test('an entry whose stat data matches but whose content changed in the index second is not proven', async () => {
    const repo = fixtureRepo()
    const path = addWorktree(repo)
    const file = indexFile(repo, path)
    writeFileSync(join(path, 'a.txt'), 'ALPHA\n')
    rewriteStat(file, 'a.txt', lstatSync(join(path, 'a.txt'), { bigint: true }))
    // The entry was written in the index's own second.
    const mtime = lstatSync(join(path, 'a.txt')).mtime
    utimesSync(file, mtime, mtime)
    expect(gitSaysClean(repo, path)).toBe(false)
    expect(await proven(repo, path)).toBe(false)
    // The control: without the racy rule the same index passes, so the rule is what catches it.
    const index = parseIndex(readFileSync(file), 20)
    if (!index) throw new Error('unreadable index')
    expect(provenLayout(path, index, BigInt(Math.floor(mtime.getTime() / 1000)) + 1n)).not.toBeNull()
    expect(provenLayout(path, index, BigInt(Math.floor(mtime.getTime() / 1000)))).toBeNull()
  })
})

/** Puts the file's current stat data into its index entry (v2) and rewrites the checksum. */
function rewriteStat(file: string, path: string, st: BigIntStats): void {
  const bytes = readFileSync(file)
  const index = parseIndex(bytes, 20)
  if (!index) throw new Error('unreadable index')
  let offset = 12
  for (const entry of index.entries) {
    if (entry.path === path) {
      const words = [
        st.ctimeNs / 1_000_000_000n,
        st.ctimeNs % 1_000_000_000n,
        st.mtimeNs / 1_000_000_000n,
        st.mtimeNs % 1_000_000_000n,
        st.dev,
        st.ino,
      ]
      for (const [i, word] of words.entries()) bytes.writeUInt32BE(Number(word & 0xffffffffn), offset + i * 4)
      bytes.writeUInt32BE(Number(st.size), offset + 36)
      break
    }
    offset += (62 + Buffer.byteLength(entry.path) + 8) & ~7
  }
  const body = bytes.subarray(0, bytes.length - 20)
  createHash('sha1')
    .update(body)
    .digest()
    .copy(bytes, bytes.length - 20)
  writeFileSync(file, bytes)
}

/**
 * Random edits across many small worktrees: wherever git finds dirt, the verdict must not be "clean". Run
 * with the real check, and with a naive one (size and mtime only) as the control that must fail it.
 */
describe('differential against git status', () => {
  type Verdict = (repo: TmpRepo, path: string) => Promise<boolean>
  const edits: ((path: string, repo: TmpRepo) => void)[] = [
    () => {},
    (p) => sneakyEdit(join(p, 'a.txt'), 'ALPHA\n'),
    (p) => sneakyEdit(join(p, 'dir/b.txt'), 'BRAVO\n'),
    (p) => writeFileSync(join(p, 'dir/sub/x'), ''),
    (p) => unlinkSync(join(p, 'dir/b.txt')),
    (p) => chmodSync(join(p, 'dir/sub/c.txt'), 0o755),
    (p) => {
      const t = statSync(join(p, 'a.txt')).mtime
      utimesSync(join(p, 'a.txt'), t, t)
    },
    (p, repo) => {
      writeFileSync(join(p, 'dir/b.txt'), 'staged\n')
      git(repo, p, 'add', '.')
      settle(repo, p)
    },
    (p, repo) => settle(repo, p),
  ]

  const naive: Verdict = async (repo, path) => {
    const index = parseIndex(readFileSync(indexFile(repo, path)), 20)
    return (
      index?.entries.every((entry) => {
        try {
          const st = lstatSync(join(path, entry.path))
          return st.size === entry.size && Math.floor(st.mtimeMs / 1000) === entry.mtimeSec
        } catch {
          return false
        }
      }) === true
    )
  }

  test('the in-process verdict is never "clean" where git finds dirt; a size-and-mtime check is', async () => {
    const repo = fixtureRepo()
    let seed = 7
    const pick = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed
    }
    const paths = Array.from({ length: 12 }, () => addWorktree(repo))
    for (const path of paths) {
      for (let n = pick() % 3; n > 0; n--) edits[pick() % edits.length]?.(path, repo)
    }
    const gitClean = new Map(paths.map((path) => [path, gitSaysClean(repo, path)]))
    const wrongAndClean = async (verdict: Verdict) => {
      let wrong = 0
      let clean = 0
      for (const path of paths) {
        if (!(await verdict(repo, path))) continue
        clean++
        if (!gitClean.get(path)) wrong++
      }
      return { wrong, clean }
    }
    const real = await wrongAndClean(proven)
    expect(real.wrong).toBe(0)
    expect(real.clean).toBeGreaterThan(0)
    expect([...gitClean.values()].filter((clean) => !clean).length).toBeGreaterThan(0)
    // The control: the same edits fool a check of size and mtime. It is judged against the content itself
    // (every file hashed again, whatever its stat says), not against git's stat check, which may itself miss a
    // same-size edit inside its racy window; so the control does not hang on timing either.
    const naiveClean = new Map<string, boolean>()
    for (const path of paths) naiveClean.set(path, await naive(repo, path))
    const fooled = paths.filter((path) => {
      git(repo, path, 'update-index', '-q', '--really-refresh')
      return naiveClean.get(path) && !gitSaysClean(repo, path)
    })
    expect(fooled.length).toBeGreaterThan(0)
  })
})
