// The native executable (docs/native.md): src/main.ts compiled by bun into one file for the machine the build
// runs on, dist/harness-native, which bin/harness runs when it is there. Bun comes from the npm registry like
// every other dev dependency: its binary is in the platform package `@oven/bun-<os>-<arch>` (one of bun's
// optional dependencies). Bun's own postinstall moves that binary over the placeholder `bun/bin/bun.exe`;
// where install scripts are not run the placeholder stays and the binary stays in the platform package, so
// both places are looked at, and the first that holds a working bun is used.
// HARNESS_BUILD_NATIVE=0 skips it (a platform bun does not support: the node bundle is then what runs).
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, renameSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
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

/** Compiles src/main.ts into dist/harness-native (written beside it, then renamed: never half a file). */
export async function buildNative({ version }) {
  rmSync(`${NATIVE}.tmp`, { force: true })
  if (process.env.HARNESS_BUILD_NATIVE === '0') {
    rmSync(NATIVE, { force: true })
    return null
  }
  const bun = findBun()
  if (!bun) {
    rmSync(NATIVE, { force: true })
    console.warn('build: no bun binary for this platform in node_modules: only the node bundle was built')
    return null
  }
  execFileSync(
    bun,
    [
      'build',
      'src/main.ts',
      '--compile',
      '--bytecode',
      '--minify',
      '--define',
      `HARNESS_VERSION=${JSON.stringify(version)}`,
      '--outfile',
      `${NATIVE}.tmp`,
    ],
    // Bun prints a progress line per step; only a failure is worth showing.
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  )
  renameSync(`${NATIVE}.tmp`, NATIVE)
  return NATIVE
}

// `node scripts/native.mjs bun` prints the bun binary the build uses (the tests run their store workers with
// it under HARNESS_TEST_RUNTIME=native).
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'bun') {
  const bun = findBun()
  if (bun) console.log(bun)
  else process.exitCode = 1
}
