import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { hostFacts } from '../../src/process/identity.js'
import { sessionRecord } from '../fixtures/records.js'
import { type CliResult, cli, NATIVE_BIN, runProgram } from '../helpers/cli.js'
import { writeRecord } from '../helpers/sessions.js'
import { tmpDir, tmpPlainDir } from '../helpers/tmp.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * bin/harness with the small entry beside it and no bundle: it can only print what the small entry answers,
 * and fails loudly for anything it would leave to the bundle.
 */
function fastOnlyBinary(): string {
  const root = tmpDir()
  mkdirSync(join(root, 'bin'))
  mkdirSync(join(root, 'dist'))
  // The launcher too: with no native executable beside it, it runs the node entry, as on a platform without one.
  for (const name of ['harness', 'harness.cjs']) {
    copyFileSync(join(ROOT, 'bin', name), join(root, 'bin', name))
    chmodSync(join(root, 'bin', name), 0o755)
  }
  copyFileSync(join(ROOT, 'dist', 'fast.cjs'), join(root, 'dist', 'fast.cjs'))
  return join(root, 'bin', 'harness')
}

/** Runs the copy under the node runtime, whichever the tests run: it has no native executable. */
function runFastOnly(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  return runProgram(bin, args, { cwd, env: { ...env, HARNESS_RUNTIME: 'node' } })
}

/**
 * Named sessions as `run --name` leaves them (the record's name, and its index in `.harness/names/`): "auth";
 * "feat", also a prefix of the id feat1234; and "stale", whose index names a record without that name. Returns
 * the folder of the session named "feat".
 */
function namedSessions(dir: string, env: NodeJS.ProcessEnv): string {
  const folder = (name: string) => {
    const path = join(dir, name)
    mkdirSync(path)
    return path
  }
  const names = join(dir, '.harness', 'names')
  mkdirSync(names, { recursive: true })
  writeRecord(dir, env, sessionRecord('a0a0a0a1', { worktree_dir: folder('auth-wt'), name: 'auth' }))
  writeFileSync(join(names, 'auth'), 'a0a0a0a1\n')
  writeRecord(dir, env, sessionRecord('feat1234', { worktree_dir: folder('feat1234-wt') }))
  const feat = folder('feat-wt')
  writeRecord(dir, env, sessionRecord('b0b0b0b1', { worktree_dir: feat, name: 'feat' }))
  writeFileSync(join(names, 'feat'), 'b0b0b0b1\n')
  writeFileSync(join(names, 'stale'), 'feat1234\n')
  return feat
}

describe('the small entry of the built binary (dist/fast.cjs)', () => {
  test('answers help and `session path` without the bundle, byte for byte as the bundle does', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: dir }))
    const featDir = namedSessions(dir, env)
    const elsewhere = tmpDir()
    const fastOnly = fastOnlyBinary()
    const full = { ...env, HARNESS_NO_FAST_PATH: '1' }
    for (const [args, cwd] of [
      [['--help'], dir],
      [['-h'], dir],
      [[], dir],
      [['session', 'path', '3f9a12c8'], dir],
      [['session', 'path', '3f9a', '--json'], dir],
      [['--dir', dir, 'session', 'path', '3f9a12c8'], elsewhere],
      [['session', 'path', 'auth'], dir],
      [['session', 'path', 'feat'], dir],
      [['session', 'path', 'feat1'], dir],
    ] as const) {
      const [fast, bundle] = await Promise.all([
        runFastOnly(fastOnly, [...args], cwd, env),
        cli([...args], { cwd, env: full, process: true }),
      ])
      expect(fast, args.join(' ')).toEqual(bundle)
    }
    // And what it cannot answer for certain goes to the bundle, which this copy lacks.
    const ambiguous = await runFastOnly(fastOnly, ['session', 'path', '3f9'], dir, env)
    expect(ambiguous.stderr).toContain('harness.cjs')
    // A name is answered by the small entry too, before a prefix it also is.
    expect((await runFastOnly(fastOnly, ['session', 'path', 'feat'], dir, env)).stdout).toBe(`${featDir}\n`)
  })

  test('the native executable answers them from its own small entry, byte for byte as its full CLI does', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: dir }))
    namedSessions(dir, env)
    const elsewhere = tmpDir()
    const full = { ...env, HARNESS_NO_FAST_PATH: '1' }
    for (const [args, cwd] of [
      [['--help'], dir],
      [[], dir],
      [['session', 'path', '3f9a12c8'], dir],
      [['session', 'path', '3f9a', '--json'], dir],
      [['session', 'path', 'nope0000'], dir],
      [['--dir', dir, 'session', 'path', '3f9a12c8'], elsewhere],
      [['session', 'path', 'auth'], dir],
      [['session', 'path', 'feat'], dir],
      [['session', 'path', 'stale'], dir],
    ] as const) {
      const [fast, bundle] = await Promise.all([
        runProgram(NATIVE_BIN, [...args], { cwd, env }),
        runProgram(NATIVE_BIN, [...args], { cwd, env: full }),
      ])
      expect(fast, args.join(' ')).toEqual(bundle)
    }
  })

  test('the plain `session show` and `session path` lines skip commander, answering byte for byte as it does', async () => {
    // Two projects alike: a RUNNING record whose processes are gone is settled (and written) by the first
    // command that reads it, so each way reads its own copy.
    const { env } = tmpPlainDir()
    const project = () => {
      const { dir } = tmpPlainDir()
      writeRecord(dir, env, sessionRecord('3f9a12c8', { worktree_dir: dir, model: 'sonnet', budget_usd: 2 }))
      writeRecord(dir, env, sessionRecord('3f9b0000', { worktree_dir: dir }), { seal: false })
      // On this host, its supervisor and agent gone: settled as interrupted when read.
      const started = '2026-09-24T18:00:00.000Z'
      const run = { n: 1, kind: 'start', pid: 999_999_990, pid_start_time: '1', started_at: started }
      const gone = { ...run, supervisor_pid: 999_999_991, supervisor_start_time: '1', ...hostFacts() }
      writeRecord(dir, env, sessionRecord('c0ffee00', { worktree_dir: dir, status: 'RUNNING', runs: [gone] }))
      writeFileSync(join(dir, '.harness', 'sessions', 'bad00000.json'), '{"id": "bad00000", "status": 7}')
      namedSessions(dir, env)
      return { dir }
    }
    const [plain, full] = [project(), project()]
    for (const args of [
      ['session', 'show', '3f9a12c8'],
      ['session', 'show', '3f9a12c8', '--json'],
      ['session', 'inspect', '3f9a1', '--no-color', '-q'],
      ['session', 'show', '3f9b0000'],
      ['session', 'show', 'c0ffee00'],
      ['session', 'show', 'c0ffee00', '--json'],
      ['session', 'path', 'c0ffee00'],
      ['session', 'show', 'auth'],
      ['session', 'show', 'feat1'],
      ['session', 'show', '3f9'],
      ['session', 'show', '3f9', '--json'],
      ['session', 'show', 'nope0000'],
      ['session', 'show', 'bad00000'],
      ['session', 'show', 'BAD!'],
      ['--dir', 'elsewhere', 'session', 'show', '3f9a12c8'],
    ]) {
      const [fast, commander] = await Promise.all([
        cli(args, { cwd: plain.dir, env, process: true }),
        cli(args, { cwd: full.dir, env: { ...env, HARNESS_NO_FAST_PATH: '1' }, process: true }),
      ])
      // The projects' folders differ, and so do the seals, which cover them, and the times settling wrote.
      const as = (text: string, dir: string) =>
        text
          .replaceAll(dir, '<project>')
          .replace(/[0-9a-f]{64}/g, '<seal>')
          .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '<time>')
      const same = (result: CliResult, dir: string) => ({
        ...result,
        stdout: as(result.stdout, dir),
        stderr: as(result.stderr, dir),
      })
      expect(same(fast, plain.dir), args.join(' ')).toEqual(same(commander, full.dir))
    }
  })
})
