// Bundles src/main.ts and every dependency into one CommonJS file, dist/harness.cjs.
// CommonJS because each lazily imported module then also requires its node built-ins lazily (an ESM bundle
// hoists every built-in import to the top), and because bin/harness.cjs compiles it as one script with V8's code cache.
// Dynamic imports stay inside the same file and are evaluated on first use, so a command pays only for the
// modules it actually uses.
// Then dist/fast.cjs: the small entry bin/harness runs first (src/cli/fast-entry.ts), holding what it answers
// with, captured here from the bundle so that it cannot differ from it.
// Then dist/ui/: the dashboard of `harness ui` (Ink and React) as ESM chunks that the bundle imports only for
// that command: Ink's layout engine loads with a top-level await, which a CommonJS file cannot hold (docs/ui.md).
// Last, dist/harness-native: the native executable for this machine (`bun build --compile`, scripts/native.mjs),
// which bin/harness runs when it is there (docs/development/native.md).
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'
import { sealerFor } from '../bench/seal.mjs'
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

/**
 * The dashboard inside the bundle: a stand-in module whose `loaded()` loads the chunk beside the bundle through
 * dist/ui/load.cjs, a file node loads as a module of its own, whose import() reaches node's ESM loader (the
 * bundle itself runs inside node:vm, where import() has no loader, and V8's code cache would not keep one).
 */
const dashboardOutside = {
  name: 'dashboard-outside',
  setup(build) {
    build.onResolve({ filter: /\/ui\/dashboard\.js$/ }, () => ({ path: 'dashboard', namespace: 'dashboard' }))
    build.onLoad({ filter: /.*/, namespace: 'dashboard' }, () => ({
      contents: "export const loaded = () => require('./ui/load.cjs')()",
      loader: 'js',
    }))
    build.onResolve({ filter: /^\.\/ui\/load\.cjs$/ }, (args) => ({ path: args.path, external: true }))
  },
}

await build({
  ...common,
  entryPoints: ['src/main.ts'],
  outfile: bundle,
  define: { HARNESS_VERSION: JSON.stringify(pkg.version) },
  plugins: [dashboardOutside],
})

// bin/harness compiles the bundle with node:vm, where a leftover import() has no loader: keep it out. Ink and
// React belong to the dashboard's chunk (dist/ui/), never to the bundle.
const bundled = readFileSync(bundle, 'utf8')
if (/\bimport\(/.test(bundled)) {
  throw new Error('dist/harness.cjs contains import(): import node built-ins statically')
}
if (/react\.transitional\.element|yoga-layout|ink-text/.test(bundled)) {
  throw new Error('dist/harness.cjs holds Ink or React: they belong to the dashboard chunk (dist/ui/)')
}

rmSync('dist/ui', { recursive: true, force: true })
await build({
  ...common,
  entryPoints: { dashboard: 'src/ui/dashboard.ts' },
  outdir: 'dist/ui',
  format: 'esm',
  splitting: true,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunk-[hash]',
  // React's production build; React's developer tools are not shipped (Ink loads them only under DEV=true).
  define: { 'process.env.NODE_ENV': '"production"' },
  external: ['react-devtools-core'],
  // The CommonJS packages inside (React, signal-exit) require node built-ins.
  banner: {
    js: "import{createRequire as __harnessRequire}from'node:module';const require=__harnessRequire(import.meta.url);",
  },
})
writeFileSync(
  'dist/ui/load.cjs',
  "'use strict'\n// harness ui: loads the dashboard's chunk for the bundle (scripts/build.mjs).\nmodule.exports = () => import('./dashboard.mjs')\n",
)

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
  // Sealed, as harness seals its own (bench/seal.mjs): `session path` gives a shell only a sealed record's folder.
  const stateHome = join(dir, 'state')
  writeFileSync(
    join(dir, '.harness', 'sessions', 'warm0001.json'),
    JSON.stringify(sealerFor(stateHome)(record, dir)),
  )
  // Each run starts from the cache the previous one wrote and adds what it compiled, so the cache ends up
  // holding the code of every command below: the lean `session path` (its plain form, without commander: the
  // small entry is skipped while the cache is written), and commander's tree for `--help`.
  rmSync(`${bundle}.cache`, { force: true })
  for (const args of [['--help'], ['session', 'list', '--json'], ['session', 'path', 'warm0001']]) {
    execFileSync(process.execPath, [harness, ...args], {
      cwd: dir,
      env: fullCliEnv({ HARNESS_WRITE_CODE_CACHE: '1', XDG_STATE_HOME: stateHome }),
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
