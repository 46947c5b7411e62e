// The npm packages as a user installs them (docs/development/native.md, "Packaging"): the main package (the
// launcher and the node bundle) and the platform package the build makes (dist/npm/harness-<os>-<arch>),
// packed with `npm pack`; the main one installed with `npm install -g --offline` into a folder of its own,
// the platform one into the main package's own node_modules, where npm puts an optional dependency. Through
// the installed command, the native executable of the platform package runs (the main package has none), and
// HARNESS_RUNTIME=node still runs the bundle the main package carries. A platform package installed beside
// the main one is never run (docs/security.md, "The launcher").
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, test } from 'vitest'
import { tmpDir, tmpPlainDir } from '../helpers/tmp.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PLATFORM = `harness-${process.platform}-${process.arch}`
const PLATFORM_DIR = join(ROOT, 'dist', 'npm', PLATFORM)
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

let prefix: string
let project: { dir: string; env: NodeJS.ProcessEnv }

/** npm with the user's own configuration and cache (offline: nothing is fetched). */
function npm(args: string[], cwd: string): Promise<{ stdout: string }> {
  return run('npm', args, { cwd, env: process.env, maxBuffer: 16 * 1024 * 1024 })
}

/** The installed command, run in the test project, under `runtime`. */
async function harness(args: string[], runtime?: 'node' | 'native') {
  const env: NodeJS.ProcessEnv = { ...project.env, HARNESS_AUTO_CLEANUP: 'off' }
  delete env.HARNESS_RUNTIME
  if (runtime) env.HARNESS_RUNTIME = runtime
  return run(join(prefix, 'bin', 'harness'), args, { cwd: project.dir, env })
}

// Both runtimes are covered in one pass, whichever runtime the suite has under test (HARNESS_RUNTIME is set here).
describe.skipIf(process.platform !== 'linux')('the npm packages, packed and installed', () => {
  beforeAll(async () => {
    if (!existsSync(join(PLATFORM_DIR, 'bin', 'harness'))) {
      throw new Error(`${PLATFORM_DIR} is missing: "npm run build" makes it beside dist/harness-native`)
    }
    const packs = tmpDir()
    await npm(['pack', '--pack-destination', packs], ROOT)
    await npm(['pack', '--pack-destination', packs], PLATFORM_DIR)
    const tarballs = readdirSync(packs).sort()
    expect(tarballs).toEqual([`harness-${VERSION}.tgz`, `${PLATFORM}-${VERSION}.tgz`])
    prefix = tmpDir()
    const quiet = ['--offline', '--no-audit', '--no-fund']
    // The bundle carries every dependency, so the main package has none to fetch: offline works.
    await npm(['install', '-g', ...quiet, '--prefix', prefix, join(packs, `harness-${VERSION}.tgz`)], packs)
    // Where npm puts the main package's optional dependency: its own node_modules. The main package names
    // none yet (docs/development/native.md), so npm installs it into a folder of its own and it is moved
    // there.
    const staging = tmpDir()
    await npm(['install', ...quiet, '--prefix', staging, join(packs, `${PLATFORM}-${VERSION}.tgz`)], packs)
    mkdirSync(join(main(), 'node_modules'), { recursive: true })
    renameSync(join(staging, 'node_modules', PLATFORM), join(main(), 'node_modules', PLATFORM))
    project = tmpPlainDir()
  }, 600_000)

  const main = () => join(prefix, 'lib', 'node_modules', 'harness')

  test('the main package carries the launcher and the bundle, not an executable', () => {
    expect(existsSync(join(main(), 'dist', 'harness.cjs'))).toBe(true)
    expect(existsSync(join(main(), 'dist', 'harness-native'))).toBe(false)
    expect(existsSync(join(main(), 'node_modules', PLATFORM, 'bin', 'harness'))).toBe(true)
  })

  test('the installed command runs the platform package executable: --version and a real run', async () => {
    const version = await harness(['--version'], 'native')
    expect(version.stdout).toBe(`${VERSION}\n`)
    // The agent prints its parent's executable: the harness process that runs it in the foreground.
    const started = await harness(
      ['run', '-q', '--no-worktree', '-a', 'exec', '--', 'sh', '-c', 'readlink /proc/$PPID/exe'],
      'native',
    )
    expect(started.stdout.trim()).toBe(realpathSync(join(main(), 'node_modules', PLATFORM, 'bin', 'harness')))
    const listed = JSON.parse((await harness(['session', 'list', '--json'])).stdout) as { status: string }[]
    expect(listed.map((s) => s.status)).toEqual(['COMPLETED'])
  })

  test('HARNESS_RUNTIME=node runs the bundle the main package carries', async () => {
    const started = await harness(
      ['run', '-q', '--no-worktree', '-a', 'exec', '--', 'sh', '-c', 'readlink /proc/$PPID/exe'],
      'node',
    )
    expect(started.stdout.trim()).toBe(realpathSync(process.execPath))
  })
})
