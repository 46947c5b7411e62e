import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { json, NODE_ENTRY } from '../helpers/cli.js'
import { tmpDir, tmpPlainDir } from '../helpers/tmp.js'

const BUILD_SEA = fileURLToPath(new URL('../../scripts/build-sea.mjs', import.meta.url))

function run(binary: string, args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  try {
    return {
      exitCode: 0,
      stdout: execFileSync(binary, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    }
  } catch (error) {
    const failed = error as { status: number; stdout: string }
    return { exitCode: failed.status, stdout: failed.stdout }
  }
}

describe('single executable (npm run build:sea)', () => {
  test('the native binary runs commands, foreground and detached, like bin/harness', async () => {
    const binary = join(tmpDir(), 'harness')
    execFileSync(process.execPath, [BUILD_SEA, binary], { stdio: 'ignore' })
    const { dir, env } = tmpPlainDir()
    expect(run(binary, ['--version'], dir, env).stdout).toMatch(/^\d+\.\d+\.\d+\n$/)
    const failed = run(binary, ['run', '-a', 'exec', '--json', '--', 'sh', '-c', 'exit 3'], dir, env)
    expect(failed.exitCode).toBe(3)
    expect(json<{ status: string }>({ ...failed, signal: null, stderr: '' }).status).toBe('FAILED')
    // The detached supervisor is the binary itself, started with the hidden command.
    const id = run(
      binary,
      ['run', '-q', '-d', '-a', 'exec', '--', 'sh', '-c', 'echo from-bg'],
      dir,
      env,
    ).stdout.trim()
    expect(run(binary, ['session', 'wait', id], dir, env).exitCode).toBe(0)
    expect(run(binary, ['session', 'logs', id, '--raw'], dir, env).stdout).toBe('from-bg\n')
    expect(run(binary, ['session', 'path', id], dir, env).stdout).toBe(`${dir}\n`)
    // The same answers from the small main script and from the bundle it carries (docs/performance.md).
    const full = { ...env, HARNESS_NO_FAST_PATH: '1' }
    expect(run(binary, ['session', 'path', id], dir, full).stdout).toBe(`${dir}\n`)
    const help = execFileSync(process.execPath, [NODE_ENTRY, '--help'], {
      cwd: dir,
      env: full,
      encoding: 'utf8',
    })
    expect(run(binary, ['--help'], dir, env)).toEqual({ exitCode: 0, stdout: help })
    // A detached agent that runs until killed: kill records KILLED and its own exit is 0.
    const sleeper = run(
      binary,
      ['run', '-q', '-d', '-a', 'exec', '--', 'sleep', '60'],
      dir,
      env,
    ).stdout.trim()
    expect(run(binary, ['session', 'kill', sleeper], dir, env).exitCode).toBe(0)
    const listed = json<{ id: string; status: string }[]>({
      ...run(binary, ['session', 'list', '--json'], dir, env),
      signal: null,
      stderr: '',
    })
    expect(Object.fromEntries(listed.map((s) => [s.id, s.status]))).toMatchObject({
      [id]: 'COMPLETED',
      [sleeper]: 'KILLED',
    })
    expect(listed).toHaveLength(3)
  })
})
