import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, test } from 'vitest'
import { NATIVE_BIN, runProgram } from '../helpers/cli.js'
import { tmpDir, tmpPlainDir } from '../helpers/tmp.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The platform package's name as bin/harness looks for it on this machine. */
const PLATFORM = `harness-${process.platform}-${process.arch}`
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

/** A package.json as npm writes one (two spaces in, one key a line). */
function packageJson(dir: string, name: string, version: string): void {
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, version, license: 'MIT' }, null, 2)}\n`)
}

/**
 * A copy of the package at `root`: bin/harness and bin/harness.cjs copied (the launcher finds its package from
 * its own path), the node bundle linked in, and the native executable only where `native` says.
 */
function packageAt(root: string, native: 'dist' | 'none'): string {
  mkdirSync(join(root, 'bin'), { recursive: true })
  mkdirSync(join(root, 'dist'), { recursive: true })
  for (const name of ['harness', 'harness.cjs'])
    copyFileSync(join(ROOT, 'bin', name), join(root, 'bin', name))
  for (const name of ['fast.cjs', 'harness.cjs', 'harness.cjs.cache']) {
    symlinkSync(join(ROOT, 'dist', name), join(root, 'dist', name))
  }
  if (native === 'dist') symlinkSync(NATIVE_BIN, join(root, 'dist', 'harness-native'))
  packageJson(root, 'harness', VERSION)
  return join(root, 'bin', 'harness')
}

/** A platform package holding the native executable, as npm installs an optional dependency, in `nodeModules`. */
function platformPackageIn(nodeModules: string, version = VERSION, name = PLATFORM): void {
  mkdirSync(join(nodeModules, PLATFORM, 'bin'), { recursive: true })
  symlinkSync(NATIVE_BIN, join(nodeModules, PLATFORM, 'bin', 'harness'))
  packageJson(join(nodeModules, PLATFORM), name, version)
}

/** The agent prints its parent's executable: the harness process that runs it (foreground: the CLI itself). */
const PRINT_PARENT = ['sh', '-c', 'readlink /proc/$PPID/exe']

let node: string
let native: string
let project: { dir: string; env: NodeJS.ProcessEnv }

/** The executable of the harness process that ran an agent in the foreground, under `runtime` (unset: none). */
async function foregroundRuntime(bin: string, runtime?: string): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...project.env, HARNESS_AUTO_CLEANUP: 'off' }
  delete env.HARNESS_RUNTIME
  if (runtime !== undefined) env.HARNESS_RUNTIME = runtime
  const run = await runProgram(bin, ['run', '-q', '--no-worktree', '-a', 'exec', '--', ...PRINT_PARENT], {
    cwd: project.dir,
    env,
  })
  expect(run, run.stderr).toMatchObject({ exitCode: 0, signal: null })
  return run.stdout.trim()
}

describe.skipIf(process.platform !== 'linux')('bin/harness, the launcher', () => {
  beforeAll(() => {
    if (!existsSync(NATIVE_BIN)) throw new Error('dist/harness-native is missing: run "npm run build"')
    node = realpathSync(process.execPath)
    native = realpathSync(NATIVE_BIN)
    project = tmpPlainDir()
  })

  test('execs the native executable when the build made one; HARNESS_RUNTIME=node runs the node bundle', async () => {
    const bin = packageAt(tmpDir(), 'dist')
    expect(await foregroundRuntime(bin)).toBe(native)
    expect(await foregroundRuntime(bin, 'native')).toBe(native)
    expect(await foregroundRuntime(bin, 'node')).toBe(node)
  })

  test('without a native executable it runs the node bundle; HARNESS_RUNTIME=native then fails plainly', async () => {
    const bin = packageAt(tmpDir(), 'none')
    expect(await foregroundRuntime(bin)).toBe(node)
    const env = { ...project.env, HARNESS_RUNTIME: 'native' }
    const refused = await runProgram(bin, ['--version'], { cwd: project.dir, env })
    expect(refused).toMatchObject({ exitCode: 127, stdout: '' })
    expect(refused.stderr).toMatch(
      /^harness: HARNESS_RUNTIME=native, but no native executable is here\nhint: /,
    )
    const bogus = await runProgram(bin, ['--version'], {
      cwd: project.dir,
      env: { ...project.env, HARNESS_RUNTIME: 'deno' },
    })
    expect(bogus).toMatchObject({ exitCode: 2, stdout: '' })
    expect(bogus.stderr).toMatch(/^harness: HARNESS_RUNTIME must be node or native, not "deno"\n/)
  })

  test('through a link to it, as npm installs the command, it still finds its package', async () => {
    const bin = packageAt(tmpDir(), 'dist')
    const binFolder = tmpDir()
    symlinkSync(bin, join(binFolder, 'harness'))
    expect(await foregroundRuntime(join(binFolder, 'harness'))).toBe(native)
  })

  test("runs the platform package's executable only inside its own node_modules, of its own name and version", async () => {
    const nested = tmpDir()
    const nestedBin = packageAt(nested, 'none')
    platformPackageIn(join(nested, 'node_modules'))
    expect(await foregroundRuntime(nestedBin)).toBe(native)
    expect(await foregroundRuntime(nestedBin, 'node')).toBe(node)

    // Beside the package: anything else installed in the same node_modules could have put it there.
    const nodeModules = join(tmpDir(), 'node_modules')
    const besideBin = packageAt(join(nodeModules, 'harness'), 'none')
    platformPackageIn(nodeModules)
    expect(await foregroundRuntime(besideBin)).toBe(node)
    const refused = await runProgram(besideBin, ['--version'], {
      cwd: project.dir,
      env: { ...project.env, HARNESS_RUNTIME: 'native' },
    })
    expect(refused).toMatchObject({ exitCode: 127, stdout: '' })

    // Inside, but of another version, or under another name: not its own.
    for (const [version, name] of [
      ['0.0.1', PLATFORM],
      [`${VERSION}-evil`, PLATFORM],
      [VERSION, 'harness-evil'],
    ]) {
      const other = tmpDir()
      const otherBin = packageAt(other, 'none')
      platformPackageIn(join(other, 'node_modules'), version, name)
      expect(await foregroundRuntime(otherBin), `${name}@${version}`).toBe(node)
    }
  })

  test('the background supervisor is the same executable as the command that started it', async () => {
    const bin = packageAt(tmpDir(), 'dist')
    for (const [runtime, expected] of [
      ['native', native],
      ['node', node],
    ] as const) {
      const env = { ...project.env, HARNESS_AUTO_CLEANUP: 'off', HARNESS_RUNTIME: runtime }
      const started = await runProgram(
        bin,
        ['run', '-q', '-d', '--no-worktree', '-a', 'exec', '--', ...PRINT_PARENT],
        { cwd: project.dir, env },
      )
      expect(started, started.stderr).toMatchObject({ exitCode: 0 })
      const id = started.stdout.trim()
      const waited = await runProgram(bin, ['session', 'wait', id], { cwd: project.dir, env })
      expect(waited, waited.stderr).toMatchObject({ exitCode: 0 })
      const logs = await runProgram(bin, ['session', 'logs', id, '--raw'], { cwd: project.dir, env })
      expect(logs.stdout, runtime).toBe(`${expected}\n`)
    }
  })
})
