// The native executable (docs/development/native.md): src/native-main.ts compiled by bun into one file for the machine the build
// runs on, dist/harness-native, which bin/harness runs when it is there. Bun comes from the npm registry like
// every other dev dependency: its binary is in the platform package `@oven/bun-<os>-<arch>` (one of bun's
// optional dependencies). Bun's own postinstall moves that binary over the placeholder `bun/bin/bun.exe`;
// where install scripts are not run the placeholder stays and the binary stays in the platform package, so
// both places are looked at, and the first that holds a working bun is used.
// HARNESS_BUILD_NATIVE=0 skips it (a platform bun does not support: the node bundle is then what runs).
import { execFileSync, spawnSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
export const NATIVE = join(root, 'dist', 'harness-native')

/** Bun's name for this machine's platform package (`@oven/bun-linux-x64`), or null where bun has none. */
function platformPackage() {
  const os = { linux: 'linux', darwin: 'darwin', freebsd: 'freebsd' }[process.platform]
  const arch = { x64: 'x64', arm64: 'aarch64' }[process.arch]
  if (!os || !arch) return null
  // musl's C library (Alpine): the glibc build does not start there.
  const musl = os === 'linux' && !process.report?.getReport?.().header?.glibcVersionRuntime
  return `@oven/bun-${os}-${arch}${musl ? '-musl' : ''}`
}

/** The path of a bun binary that answers `--version`, or null. */
export function findBun() {
  const candidates = []
  const require = createRequire(join(root, 'package.json'))
  let bunDir = null
  try {
    bunDir = dirname(require.resolve('bun/package.json'))
  } catch {}
  const pkg = platformPackage()
  if (pkg) {
    for (const from of [bunDir, root]) {
      if (!from) continue
      try {
        const dir = dirname(createRequire(join(from, 'package.json')).resolve(`${pkg}/package.json`))
        candidates.push(join(dir, 'bin', 'bun'))
      } catch {}
    }
  }
  // After bun's postinstall: the real binary in place of the placeholder (a text-sized file).
  if (bunDir) candidates.push(join(bunDir, 'bin', 'bun.exe'))
  for (const file of candidates) {
    if (!existsSync(file) || statSync(file).size < 1_000_000) continue
    const probe = spawnSync(file, ['--version'], { encoding: 'utf8' })
    if (probe.status === 0) return file
  }
  return null
}

/** Compiles src/native-main.ts (the small entry, then main.ts) into dist/harness-native (written beside it, then renamed: never half a file). */
export async function buildNative({ version, answers }) {
  rmSync(`${NATIVE}.tmp`, { force: true })
  if (process.env.HARNESS_BUILD_NATIVE === '0') {
    rmSync(NATIVE, { force: true })
    rmSync(PLATFORM_DIR, { recursive: true, force: true })
    return null
  }
  const bun = findBun()
  if (!bun) {
    rmSync(NATIVE, { force: true })
    rmSync(PLATFORM_DIR, { recursive: true, force: true })
    console.warn('build: no bun binary for this platform in node_modules: only the node bundle was built')
    return null
  }
  const compile = (extra) =>
    execFileSync(
      bun,
      [
        'build',
        'src/native-main.ts',
        '--compile',
        '--bytecode',
        // ESM split into chunks that load on first import: one file holding everything (bun's default with
        // --bytecode) loads every module's node built-ins at start (docs/development/native.md, "Start-up").
        '--format=esm',
        '--splitting',
        '--minify',
        // A compiled bun program reads .env and bunfig.toml from the folder it starts in unless told not to: a
        // cloned repository's bunfig.toml `preload` would run its code inside harness, and its .env would reach
        // every agent. harness reads neither (docs/security.md).
        '--no-compile-autoload-dotenv',
        '--no-compile-autoload-bunfig',
        '--no-compile-autoload-tsconfig',
        '--no-compile-autoload-package-json',
        // React's production build, without its developer tools (the dashboard, docs/ui.md).
        '--define',
        'process.env.NODE_ENV="production"',
        '--external',
        'react-devtools-core',
        '--define',
        `HARNESS_VERSION=${JSON.stringify(version)}`,
        '--define',
        `HARNESS_BUILT_ANSWERS=${JSON.stringify(answers)}`,
        ...extra,
        '--outfile',
        `${NATIVE}.tmp`,
      ],
      // Bun prints a progress line per step; only a failure is worth showing.
      { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
    )
  compile([])
  // Built again with its bytecode laid out in the order the hot commands use it (bun's --bytecode-order): they
  // then touch fewer pages of the executable and of memory (docs/development/native.md, "Start-up"). Without a profile
  // (a command that failed here) the first build stands.
  const orders = recordBytecodeOrder(`${NATIVE}.tmp`)
  if (orders) {
    try {
      compile([`--bytecode-order=${orders.files.join(',')}`])
    } finally {
      rmSync(orders.dir, { recursive: true, force: true })
    }
  }
  renameSync(`${NATIVE}.tmp`, NATIVE)
  writePlatformPackage(version)
  return NATIVE
}

/**
 * The order in which `executable` runs its functions for the commands scripts call most (`session path`, then
 * `session show`, `--help` and `session list --json`), recorded by bun (BUN_BYTECODE_ORDER_OUT) on a session it
 * runs itself in a throwaway project and state folder; null if any of them fails.
 */
function recordBytecodeOrder(executable) {
  const dir = mkdtempSync(join(tmpdir(), 'harness-order-'))
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    // No cleanup started in the background: the folder goes when this is done.
    HARNESS_AUTO_CLEANUP: 'off',
  }
  const project = join(dir, 'project')
  mkdirSync(project)
  const run = (args, extra = {}) =>
    execFileSync(executable, args, {
      cwd: project,
      env: { ...env, ...extra },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
  try {
    const { id } = JSON.parse(run(['run', '--json', '--no-worktree', '-a', 'exec', '--', 'true']))
    const commands = [
      ['session', 'path', id],
      ['session', 'show', id],
      ['--help'],
      ['session', 'list', '--json'],
    ]
    const files = commands.map((args, i) => {
      const file = join(dir, `order-${i}`)
      run(args, { BUN_BYTECODE_ORDER_OUT: file })
      return file
    })
    return { dir, files }
  } catch {
    rmSync(dir, { recursive: true, force: true })
    return null
  }
}

/** The platform package's name for this machine, as bin/harness looks for it (`harness-linux-x64`). */
export const PLATFORM_PACKAGE = `harness-${process.platform}-${process.arch}`
/** Where the build puts it: `dist/npm/harness-<os>-<arch>`, ready for `npm pack` or `npm publish`. */
export const PLATFORM_DIR = join(root, 'dist', 'npm', PLATFORM_PACKAGE)

/**
 * The platform package of the executable (docs/development/native.md, "Packaging"): package.json with `os` and `cpu`, so
 * that npm installs it only on this platform, and the executable at bin/harness, where the main package's
 * launcher looks. No `bin` of its own: the command stays the main package's launcher.
 */
function writePlatformPackage(version) {
  rmSync(PLATFORM_DIR, { recursive: true, force: true })
  mkdirSync(join(PLATFORM_DIR, 'bin'), { recursive: true })
  const pkg = {
    name: PLATFORM_PACKAGE,
    version,
    description: `The harness native executable for ${process.platform} ${process.arch}`,
    license: 'MIT',
    os: [process.platform],
    cpu: [process.arch],
    files: ['bin/harness'],
  }
  writeFileSync(join(PLATFORM_DIR, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  // A hard link where the file system allows (the executable is over 100 MB), else a copy.
  const target = join(PLATFORM_DIR, 'bin', 'harness')
  try {
    linkSync(NATIVE, target)
  } catch {
    copyFileSync(NATIVE, target)
  }
  chmodSync(target, 0o755)
}

// `node scripts/native.mjs bun` prints the bun binary the build uses (the tests run their store workers with
// it under HARNESS_TEST_RUNTIME=native).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'bun') {
  const bun = findBun()
  if (bun) console.log(bun)
  else process.exitCode = 1
}
