import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
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
})
