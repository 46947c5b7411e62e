import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { runCli } from '../../../src/app/entry.js'
import {
  type BuiltAnswers,
  type FastAnswer,
  fastAnswer,
  type Surroundings,
} from '../../../src/cli/fast-entry.js'
import { plainCall } from '../../../src/cli/fast-path.js'
import { sessionRecord } from '../../fixtures/records.js'
import { writeRecord } from '../../helpers/sessions.js'
import { tmpDir, tmpGitRepo, tmpPlainDir } from '../../helpers/tmp.js'

const built: BuiltAnswers = {
  help: 'the help\n',
  noCommand: { stderr: 'the help\n', exitCode: 2 },
}

/** A stream that keeps what is written to it, not a terminal. */
function sink(): NodeJS.WriteStream & { text: string } {
  const stream = {
    text: '',
    isTTY: false,
    on: () => stream,
    write(chunk: string) {
      stream.text += chunk
      return true
    },
  }
  return stream as unknown as NodeJS.WriteStream & { text: string }
}

/** What the full CLI answers to a plain `session path` line: the binary's entry, run in this process. */
async function fullAnswer(argv: string[], around: Surroundings): Promise<FastAnswer> {
  expect(plainCall(argv, [])?.command).toBe('path')
  const stdout = sink()
  const stderr = sink()
  const { code } = await runCli(argv, {
    cwd: around.cwd,
    env: around.env,
    stdin: Readable.from([]),
    stdout,
    stderr,
  })
  return { stdout: stdout.text, stderr: stderr.text, exitCode: code }
}

const NOT_TERMINALS = { stdoutIsTerminal: false, stderrIsTerminal: false }

/**
 * The fast entry answers `argv` (or leaves it, as `fast` says) and, when it answers, exactly as the full CLI
 * does; returns the full CLI's answer.
 */
async function expectSameAnswer(argv: string[], around: Surroundings, fast: boolean): Promise<FastAnswer> {
  const full = await fullAnswer(argv, around)
  const answered = await fastAnswer(argv, around, built)
  expect(answered !== null, `fast entry ${answered ? 'answered' : 'left'} ${argv.join(' ')}`).toBe(fast)
  if (answered) expect(answered).toEqual(full)
  return full
}

describe('the fast entry answers `session path` exactly as the full CLI, or leaves it to it', () => {
  test('exact id, unique prefix, --json, lower-case status, a session without a worktree', async () => {
    const { dir, env } = tmpPlainDir()
    const worktree = join(dir, '.harness', 'worktrees', '3f9a12c8')
    mkdirSync(worktree, { recursive: true })
    writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: worktree }))
    writeRecord(dir, env, sessionRecord('77aa0001', { worktree_dir: worktree, status: 'failed' }))
    writeRecord(dir, env, sessionRecord('88bb0001', { worktree_dir: worktree }), { seal: false })
    writeRecord(
      dir,
      env,
      sessionRecord('99cc0001', { worktree_dir: dir, is_worktree: false, git_branch: null, base_dir: dir }),
    )
    const around = { cwd: dir, env, ...NOT_TERMINALS }
    expect(await expectSameAnswer(['session', 'path', '3f9a12c8'], around, true)).toEqual({
      stdout: `${worktree}\n`,
      stderr: '',
      exitCode: 0,
    })
    await expectSameAnswer(['session', 'path', '3f9a'], around, true)
    await expectSameAnswer(['--json', 'session', 'path', '3f9a12c8', '-q', '--no-color'], around, true)
    // Sealed with a lower-case status (harness writes upper case): what the store verifies is upper-cased.
    await expectSameAnswer(['session', 'path', '77aa0001'], around, false)
    // A foreign record's folder is not given to a shell: the full CLI refuses it (docs/security.md, "hcd").
    expect(await expectSameAnswer(['session', 'path', '88bb0001'], around, false)).toMatchObject({
      stdout: '',
      exitCode: 4,
      stderr: expect.stringContaining('is foreign'),
    })
    expect(await expectSameAnswer(['session', 'path', '99cc', '--json'], around, true)).toMatchObject({
      stdout: `${JSON.stringify({ id: '99cc0001', path: dir }, null, 2)}\n`,
    })
  })

  test("a sealed record's folder outside the project and its worktree folders, or relative: left, then refused", async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: tmpDir() }))
    writeRecord(dir, env, sessionRecord('3f9a12c9', { worktree_dir: '.' }))
    const around = { cwd: dir, env, ...NOT_TERMINALS }
    for (const id of ['3f9a12c8', '3f9a12c9']) {
      expect(await expectSameAnswer(['session', 'path', id], around, false)).toMatchObject({
        stdout: '',
        exitCode: 4,
        stderr: expect.stringMatching(/outside the project|not an absolute path/),
      })
    }
  })

  test('--dir and HARNESS_DIR, given as the project or as its .harness folder, from anywhere', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: dir }))
    const elsewhere = tmpDir()
    const around = { cwd: elsewhere, env, ...NOT_TERMINALS }
    await expectSameAnswer(['--dir', dir, 'session', 'path', '3f9a12c8'], around, true)
    await expectSameAnswer(['session', 'path', '3f9a12c8', `--dir=${join(dir, '.harness')}`], around, true)
    await expectSameAnswer(
      ['session', 'path', '3f9a12c8'],
      { ...around, env: { ...env, HARNESS_DIR: dir } },
      true,
    )
    // Errors are the full CLI's: a --dir that is no folder, and a project found nowhere (git is asked then).
    await expectSameAnswer(['--dir', join(dir, 'nope'), 'session', 'path', '3f9a12c8'], around, false)
    await expectSameAnswer(['session', 'path', '3f9a12c8'], around, false)
  })

  test('errors, records that are not plainly valid, and RUNNING sessions are left to the full CLI', async () => {
    const { dir, env } = tmpPlainDir()
    const sessions = join(dir, '.harness', 'sessions')
    writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: dir }))
    writeRecord(dir, env, sessionRecord('3f9a99aa', { worktree_dir: dir }))
    writeRecord(dir, env, sessionRecord('aaaa0001', { worktree_dir: join(dir, 'gone') }))
    writeRecord(dir, env, sessionRecord('bbbb0001', { worktree_dir: dir, status: 'RUNNING' }))
    writeRecord(dir, env, sessionRecord('cccc0001', { worktree_dir: dir, created_at: 'yesterday' }))
    writeRecord(dir, env, sessionRecord('dddd0001', { worktree_dir: dir, status: 'DONE' }))
    writeRecord(dir, env, sessionRecord('eeee0002', { worktree_dir: dir }), { name: 'eeee0001.json' })
    writeFileSync(join(sessions, 'ffff0001.json'), '{"id": "ffff0001", ')
    const around = { cwd: dir, env, ...NOT_TERMINALS }
    for (const [argv, exitCode] of [
      [['session', 'path', '3f9a'], 2], // ambiguous
      [['session', 'path', 'abcd0000'], 3], // unknown
      [['session', 'path', '3f9'], 3], // too short for a prefix
      [['session', 'path', '../x'], 2], // not an id
      [['session', 'path', 'aaaa0001'], 4], // its folder is gone
      [['session', 'path', 'cccc0001'], 1], // corrupt: bad time
      [['session', 'path', 'dddd0001'], 1], // corrupt: unknown status
      [['session', 'path', 'eeee0001'], 1], // corrupt: another id inside
      [['session', 'path', 'ffff0001'], 1], // corrupt: not JSON
    ] as const) {
      expect(await expectSameAnswer([...argv], around, false)).toMatchObject({ exitCode, stdout: '' })
    }
    // A RUNNING record is reconciled (its processes checked, maybe rewritten) by the full CLI first.
    await expectSameAnswer(['session', 'path', 'bbbb0001'], around, false)
  })

  test('a project whose .harness holds a symlink, and one found only through git, are left to the full CLI', async () => {
    const { dir, env } = tmpPlainDir()
    const real = tmpDir()
    writeRecord(real, env, sessionRecord('3f9a12c8', { worktree_dir: dir }))
    mkdirSync(join(dir, '.harness'))
    symlinkSync(join(real, '.harness', 'sessions'), join(dir, '.harness', 'sessions'))
    const linked = await expectSameAnswer(
      ['session', 'path', '3f9a12c8'],
      { cwd: dir, env, ...NOT_TERMINALS },
      false,
    )
    expect(linked.exitCode).toBe(4)
    // Without .harness above, the project is the repository's main worktree, which git tells.
    const repo = tmpGitRepo()
    const inRepo = { cwd: repo.dir, env: repo.env, ...NOT_TERMINALS }
    expect(await expectSameAnswer(['session', 'path', '3f9a12c8'], inRepo, false)).toMatchObject({
      exitCode: 3,
    })
    writeRecord(repo.dir, repo.env, sessionRecord('3f9a12c8', { worktree_dir: repo.dir }))
    const sessions = join(repo.dir, '.harness', 'sessions')
    await expectSameAnswer(['session', 'path', '3f9a12c8'], { ...inRepo, cwd: sessions }, true)
  })
})

describe('the fast entry prints the top-level help only where commander would print the captured text', () => {
  const around = { cwd: '/', env: {}, ...NOT_TERMINALS }
  test.each([
    [['--help'], { stdout: 'the help\n', stderr: '', exitCode: 0 }],
    [['-h'], { stdout: 'the help\n', stderr: '', exitCode: 0 }],
    [[], { stdout: '', stderr: 'the help\n', exitCode: 2 }],
  ])('%j', async (argv, expected) => {
    expect(await fastAnswer(argv, around, built)).toEqual(expected)
  })

  test('a terminal (wrapped to its width) or forced colours leave it to commander', async () => {
    expect(await fastAnswer(['--help'], { ...around, stdoutIsTerminal: true }, built)).toBeNull()
    expect(await fastAnswer([], { ...around, stderrIsTerminal: true }, built)).toBeNull()
    expect(await fastAnswer(['--help'], { ...around, stderrIsTerminal: true }, built)).not.toBeNull()
    expect(await fastAnswer(['--help'], { ...around, env: { FORCE_COLOR: '1' } }, built)).toBeNull()
    expect(await fastAnswer(['-h'], { ...around, env: { CLICOLOR_FORCE: '' } }, built)).toBeNull()
    expect(await fastAnswer(['--help', '--json'], around, built)).toBeNull()
    expect(await fastAnswer(['session', '--help'], around, built)).toBeNull()
  })
})
