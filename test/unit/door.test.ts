import { execFileSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  appendText,
  chmodDir,
  copyAgentFiles,
  copyPlainFile,
  emptyDirHeld,
  HeldDir,
  isEmptyFolder,
  makeDirs,
  parseJson,
  readAgentFile,
  readText,
  removeFileBelow,
  removeHeldSync,
  setMode,
  type UnsafeFileError,
  writeFileAtomic,
} from '../../src/disk/door.js'
import { runHook } from '../../src/process/hooks.js'
import { tmpDir } from '../helpers/tmp.js'

/** A project folder with `.harness/`, and `outside/` holding the user's own files. */
function layout() {
  const root = tmpDir()
  const harness = join(root, 'project', '.harness')
  const outside = join(root, 'outside')
  mkdirSync(join(harness, 'logs'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(outside, 'keep.txt'), 'the user file\n')
  return { root, harness, outside }
}

describe('the door to the disk (SPEC §10; docs/security.md)', () => {
  test('a FIFO, a device and a link are refused at once, never read or waited on', {
    tags: ['process'],
  }, () => {
    const { harness, outside } = layout()
    execFileSync('mkfifo', [join(harness, 'fifo.json')])
    symlinkSync('/dev/zero', join(harness, 'zero.json'))
    symlinkSync(join(outside, 'keep.txt'), join(harness, 'link.json'))
    const reason = (path: string) => {
      try {
        readText(path, 'record')
      } catch (error) {
        return (error as UnsafeFileError).reason
      }
      return 'read'
    }
    expect(reason(join(harness, 'fifo.json'))).toBe('a FIFO')
    expect(reason(join(harness, 'zero.json'))).toBe('a symlink')
    expect(reason('/dev/zero')).toBe('a device')
    expect(reason(join(harness, 'link.json'))).toBe('a symlink')
  })

  test('a folder of .harness that is a link is refused for every file below it', () => {
    const { harness, outside } = layout()
    rmSync(join(harness, 'logs'), { recursive: true })
    symlinkSync(outside, join(harness, 'logs'))
    expect(() => readText(join(harness, 'logs', 'keep.txt'), 'record')).toThrow(/symlink/)
    expect(() => appendText(join(harness, 'logs', 'keep.txt'), 'owned\n')).toThrow(/symlink/)
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('the user file\n')
  })

  test('JSON is bounded in depth and its errors never quote the text', () => {
    expect(() => parseJson(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toThrow(/nested deeper than 64/)
    expect(parseJson(JSON.stringify({ a: '['.repeat(70) }))).toEqual({ a: '['.repeat(70) })
    // At the bound and one past it, with objects and arrays mixed, and with brackets in strings beside them.
    const nested = (n: number) => `${'[{"a":'.repeat(n / 2)}1${'}]'.repeat(n / 2)}`
    expect(() => parseJson(nested(64))).not.toThrow()
    expect(() => parseJson(nested(66))).toThrow(/nested deeper than 64 levels \(at character 192\)/)
    expect(() => parseJson(`["${'{'.repeat(100)}", ${nested(64)}]`)).toThrow(/nested deeper than 64/)
    expect(parseJson(`["${'{['.repeat(100)}", [[1]]]`)).toEqual(['{['.repeat(100), [[1]]])
    let message = ''
    try {
      parseJson('aws_secret_access_key = AKIASECRET')
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toMatch(/^not valid JSON/)
    expect(message).not.toMatch(/aws|AKIA/)
  })

  test('an atomic write never goes through a planted temp name: its temp is exclusive and random', () => {
    const { harness, outside } = layout()
    const stamp = join(harness, 'auto-cleanup.stamp')
    symlinkSync(join(outside, 'keep.txt'), `${stamp}.${process.pid}.tmp`)
    writeFileAtomic(stamp, '{"at":"now"}\n')
    expect(readFileSync(stamp, 'utf8')).toBe('{"at":"now"}\n')
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('the user file\n')
    // The one file planted is all that is left beside the stamp: no temp file of its own.
    expect(readdirSync(harness).sort()).toEqual([
      'auto-cleanup.stamp',
      `auto-cleanup.stamp.${process.pid}.tmp`,
      'logs',
    ])
  })

  test("a failing hooks.on_status notes it in the session's log, never through a shipped log link", {
    tags: ['process'],
  }, async () => {
    const { harness, outside } = layout()
    const log = join(harness, 'logs', 'abcd1234.log')
    symlinkSync(join(outside, 'keep.txt'), log)
    await runHook(['false'], {}, log, process.env, { patienceMs: 60_000, deadlineMs: 60_000 })
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('the user file\n')
    // A plain log is noted in.
    rmSync(log)
    await runHook(['false'], {}, log, process.env, { patienceMs: 60_000, deadlineMs: 60_000 })
    expect(readFileSync(log, 'utf8')).toContain('[harness] hooks.on_status (false) exited with 1')
  })
})

describe('removal holds the folder it checked', () => {
  test('a worktree swapped for a symlink after it was opened: only the held folder is emptied', async () => {
    const { root, outside } = layout()
    const worktree = join(root, 'wt')
    mkdirSync(join(worktree, 'src'), { recursive: true })
    writeFileSync(join(worktree, 'keep.txt'), 'the worktree copy\n')
    writeFileSync(join(worktree, 'src', 'a.ts'), 'a\n')
    writeFileSync(join(worktree, '.git'), 'gitdir: x\n')
    const held = HeldDir.open(worktree)
    // The swap an attacker makes between the check and the removal: the path now leads outside.
    renameSync(worktree, `${worktree}-moved`)
    symlinkSync(outside, worktree)
    try {
      await held.empty(['.git'])
    } finally {
      held.close()
    }
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('the user file\n')
    expect(readdirSync(`${worktree}-moved`)).toEqual(['.git'])
  })

  test('a sub-folder swapped for a symlink is removed as a link, its target left alone', async () => {
    const { root, outside } = layout()
    const worktree = join(root, 'wt')
    mkdirSync(join(worktree, 'src'), { recursive: true })
    writeFileSync(join(worktree, 'src', 'keep.txt'), 'a\n')
    rmSync(join(worktree, 'src'), { recursive: true })
    symlinkSync(outside, join(worktree, 'src'))
    await emptyDirHeld(worktree)
    expect(readdirSync(worktree)).toEqual([])
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true)
  })

  test('removeFileBelow never follows a link on the way: a folder turned into a link keeps its target', () => {
    const { root, outside } = layout()
    const worktree = join(root, 'wt')
    mkdirSync(join(worktree, 'a', 'b'), { recursive: true })
    writeFileSync(join(worktree, 'a', 'b', 'gone.txt'), 'x\n')
    symlinkSync(outside, join(worktree, 'data'))
    expect(removeFileBelow(worktree, 'data/keep.txt')).toBe('not-followed')
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true)
    expect(removeFileBelow(worktree, 'a/b/gone.txt')).toBe('removed')
    // The folders it left empty go too, up to the worktree.
    expect(readdirSync(worktree)).toEqual(['data'])
    expect(removeFileBelow(worktree, 'data')).toBe('removed')
    expect(removeFileBelow(worktree, 'nothing/here')).toBe('absent')
  })

  test('an agent-written folder is read and copied without following a link or opening a FIFO', {
    tags: ['process'],
  }, () => {
    const { root, outside } = layout()
    const agent = join(root, 'agent')
    mkdirSync(join(agent, 'objects', 'ab'), { recursive: true })
    writeFileSync(join(agent, 'objects', 'ab', 'cd'), 'object\n')
    symlinkSync(join(outside, 'keep.txt'), join(agent, 'objects', 'ab', 'ef'))
    execFileSync('mkfifo', [join(agent, 'objects', 'ab', 'ff')])
    symlinkSync(outside, join(agent, 'objects', 'zz'))
    expect(readAgentFile(agent, 'objects/ab/cd', 100)?.toString()).toBe('object\n')
    expect(() => readAgentFile(agent, 'objects/ab/ff', 100)).toThrow(/is a FIFO/)
    expect(() => readAgentFile(agent, 'objects/ab/ef', 100)).toThrow(/a symlink/)
    expect(() => readAgentFile(agent, 'objects/ab/cd', 3)).toThrow(/over 3 bytes/)
    expect(() => readAgentFile(agent, 'objects/zz/keep.txt', 100)).toThrow(/not a real folder/)
    expect(readAgentFile(agent, 'objects/none', 100)).toBeNull()
    const to = join(root, 'copy')
    expect(copyAgentFiles(join(agent, 'objects'), to, () => true)).toBe(1)
    expect(readdirSync(join(to, 'ab'))).toEqual(['cd'])
  })

  test('a worktree that is a link when opened is refused', () => {
    const { root, outside } = layout()
    symlinkSync(outside, join(root, 'wt'))
    expect(() => HeldDir.open(join(root, 'wt'))).toThrow(/not a real folder/)
  })
})

describe("the door's calls for the git layer and the repairs", () => {
  test('the sync removal holds folders too: a sub-folder that is a link goes as a link', () => {
    const { root, outside } = layout()
    const folder = join(root, 'tmp-index')
    mkdirSync(join(folder, 'deep', 'er'), { recursive: true })
    writeFileSync(join(folder, 'deep', 'er', 'index'), 'x')
    symlinkSync(outside, join(folder, 'deep', 'src'))
    removeHeldSync(folder)
    expect(existsSync(folder)).toBe(false)
    expect(readdirSync(outside)).toEqual(['keep.txt'])
  })

  test('a copy never reads through a link or from a FIFO, and never writes over anything', {
    tags: ['process'],
  }, () => {
    const { root, outside } = layout()
    symlinkSync(join(outside, 'keep.txt'), join(root, 'index'))
    expect(() => copyPlainFile(join(root, 'index'), join(root, 'copy'))).toThrow(/symlink/)
    execFileSync('mkfifo', [join(root, 'fifo')])
    expect(() => copyPlainFile(join(root, 'fifo'), join(root, 'copy'))).toThrow(/FIFO|not a plain file/)
    writeFileSync(join(root, 'real'), 'index bytes')
    copyPlainFile(join(root, 'real'), join(root, 'copy'))
    expect(readFileSync(join(root, 'copy'), 'utf8')).toBe('index bytes')
    expect(() => copyPlainFile(join(root, 'real'), join(root, 'copy'))).toThrow(/EEXIST/)
    expect(existsSync(join(root, 'copy-leftover'))).toBe(false)
  })

  test("a folder's mode is set through a no-follow open: a link in its place is refused, its target unchanged", () => {
    const { root, outside } = layout()
    const before = statSync(outside).mode
    symlinkSync(outside, join(root, 'worktree'))
    expect(() => chmodDir(join(root, 'worktree'), 0o700)).toThrow(/not a real folder/)
    expect(statSync(outside).mode).toBe(before)
    mkdirSync(join(root, 'real'), { mode: 0o755 })
    chmodDir(join(root, 'real'), 0o700)
    expect(statSync(join(root, 'real')).mode & 0o777).toBe(0o700)
  })
})

describe("the run workspace's folder calls (a worktree, the worktree root)", () => {
  test("a worktree's mode is set without following a link planted in its place", () => {
    const { harness, outside } = layout()
    const worktree = join(harness, 'worktrees', 'ab12cd34')
    mkdirSync(join(harness, 'worktrees'))
    symlinkSync(outside, worktree)
    const before = statSync(outside).mode & 0o777
    expect(before).not.toBe(0o700)
    expect(() => setMode(worktree, 0o700)).toThrow(/not a real folder/)
    expect(statSync(outside).mode & 0o777).toBe(before)
  })

  test('a link to an empty folder is not an empty folder (a worktree folder a record names)', () => {
    const { root, outside } = layout()
    mkdirSync(join(outside, 'empty'))
    symlinkSync(join(outside, 'empty'), join(root, 'ab12cd34'))
    expect(isEmptyFolder(join(root, 'ab12cd34'))).toBe(false)
    mkdirSync(join(root, 'real'))
    expect(isEmptyFolder(join(root, 'real'))).toBe(true)
  })

  test("the worktree root is made through the user's own link, never through a link inside .harness", () => {
    const { root, harness, outside } = layout()
    symlinkSync(outside, join(harness, 'worktrees'))
    expect(() => makeDirs(join(harness, 'worktrees'), 0o700)).toThrow(/symlink/)
    expect(() => makeDirs(join(harness, 'worktrees', 'deeper'), 0o700)).toThrow(/symlink/)
    expect(readdirSync(outside)).toEqual(['keep.txt'])
    // Outside .harness the root (or a folder above it) may be a link the user made: followed.
    symlinkSync(outside, join(root, 'elsewhere'))
    makeDirs(join(root, 'elsewhere', 'worktrees'), 0o700)
    expect(statSync(join(outside, 'worktrees')).isDirectory()).toBe(true)
  })
})
