// Bundles src/main.ts and every dependency into one CommonJS file, dist/harness.cjs.
// CommonJS because each lazily imported module then also requires its node built-ins lazily (an ESM bundle
// hoists every built-in import to the top), and because bin/harness.cjs compiles it as one script with V8's code cache.
// Dynamic imports stay inside the same file and are evaluated on first use, so a command pays only for the
// modules it actually uses.
// Then dist/fast.cjs: the small entry bin/harness runs first (src/cli/fast-entry.ts), holding what it answers
// with, captured here from the bundle so that it cannot differ from it.
// Last, dist/harness-native: the native executable for this machine (`bun build --compile`, scripts/native.mjs),
// which bin/harness runs when it is there (docs/native.md).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import { buildNative } from './native.mjs'

const bundle = 'dist/harness.cjs'
const harness = new URL('../bin/harness.cjs', import.meta.url).pathname

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
}

await build({
  ...common,
  entryPoints: ['src/main.ts'],
  outfile: bundle,
  define: { HARNESS_VERSION: JSON.stringify(pkg.version) },
})

// bin/harness compiles the bundle with node:vm, where a leftover import() has no loader: keep it out.
if (/\bimport\(/.test(readFileSync(bundle, 'utf8'))) {
  throw new Error('dist/harness.cjs contains import(): import node built-ins statically')
}

/** The environment of the full CLI at build time: nothing that changes how help is printed, and by default no fast path. */
function fullCliEnv(extra = { HARNESS_NO_FAST_PATH: '1' }) {
  const env = { ...process.env, ...extra }
  for (const name of ['FORCE_COLOR', 'CLICOLOR_FORCE', 'NO_COLOR', 'COLUMNS', 'HARNESS_DIR']) delete env[name]
  return env
}

const dir = mkdtempSync(join(tmpdir(), 'harness-build-'))
/** What the small entries answer with (dist/fast.cjs and the native executable's). */
let answers
try {
  // Warm V8's code cache with the hottest commands (`session path`, which scripts call in loops, and `--help`)
  // on a throwaway project, so that starting harness deserialises the bundle instead of compiling it. The small
  // entry answers most of these without the bundle; the cache serves the rest (a terminal's help, a RUNNING
  // session's path, errors) and every other command.
  mkdirSync(join(dir, '.harness', 'sessions'), { recursive: true })
  const now = new Date().toISOString()
  const record = {
    id: 'warm0001',
    provider: 'exec',
    status: 'COMPLETED',
    worktree_dir: dir,
    created_at: now,
  }
  writeFileSync(join(dir, '.harness', 'sessions', 'warm0001.json'), JSON.stringify(record))
  // Each run starts from the cache the previous one wrote and adds what it compiled, so the cache ends up
  // holding the code of every command below: the lean `session path` (its plain form, without commander: the
  // small entry is skipped while the cache is written), and commander's tree for `--help`.
  rmSync(`${bundle}.cache`, { force: true })
  for (const args of [['--help'], ['session', 'list', '--json'], ['session', 'path', 'warm0001']]) {
    execFileSync(process.execPath, [harness, ...args], {
      cwd: dir,
      env: fullCliEnv({ HARNESS_WRITE_CODE_CACHE: '1' }),
      stdio: 'ignore',
    })
  }

  // What the full CLI prints for the top-level help with its output not a terminal (commander's 80 columns).
  const help = execFileSync(process.execPath, [harness, '--help'], {
    cwd: dir,
    env: fullCliEnv(),
    encoding: 'utf8',
  })
  const bare = spawnSync(process.execPath, [harness], { cwd: dir, env: fullCliEnv(), encoding: 'utf8' })
  if (bare.status === null || bare.stdout !== '' || !bare.stderr.startsWith('Usage: harness')) {
    throw new Error(
      `harness without a command printed ${JSON.stringify(bare.stdout)} / ${JSON.stringify(bare.stderr)}`,
    )
  }
  answers = { help, noCommand: { stderr: bare.stderr, exitCode: bare.status } }
  await build({
    ...common,
    entryPoints: ['src/cli/fast-entry.ts'],
    outfile: 'dist/fast.cjs',
    define: { HARNESS_BUILT_ANSWERS: JSON.stringify(answers) },
  })
} finally {
  rmSync(dir, { recursive: true, force: true })
}

await buildNative({ version: pkg.version, answers })
