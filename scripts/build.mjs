// Bundles src/main.ts and every dependency into one CommonJS file, dist/harness.cjs.
// CommonJS because each lazily imported module then also requires its node built-ins lazily (an ESM bundle
// hoists every built-in import to the top), and because Node's single-executable support wants one CJS file.
// Dynamic imports stay inside the same file and are evaluated on first use, so a command pays only for the
// modules it actually uses.
import { readFileSync } from 'node:fs'
import { build } from 'esbuild'

const bundle = 'dist/harness.cjs'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

await build({
  entryPoints: ['src/main.ts'],
  outfile: 'dist/harness.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: true,
  legalComments: 'none',
  define: { HARNESS_VERSION: JSON.stringify(pkg.version) },
  logLevel: 'warning',
})

// bin/harness compiles the bundle with node:vm, where a leftover import() has no loader: keep it out.
if (/\bimport\(/.test(readFileSync('dist/harness.cjs', 'utf8'))) {
  throw new Error('dist/harness.cjs contains import(): import node built-ins statically')
}

// Warm V8's code cache with the hottest commands (`session path`, which scripts call in loops, and `--help`) on a
// throwaway project, so that starting harness deserialises the bundle instead of compiling it.
{
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const { execFileSync } = await import('node:child_process')
  const dir = mkdtempSync(join(tmpdir(), 'harness-build-'))
  try {
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
    // holding the code of every command below: the lean `session path`, and commander's tree for `--help`.
    rmSync(`${bundle}.cache`, { force: true })
    for (const args of [['--help'], ['session', 'list', '--json'], ['session', 'path', 'warm0001']]) {
      execFileSync(process.execPath, [new URL('../bin/harness', import.meta.url).pathname, ...args], {
        cwd: dir,
        env: { ...process.env, HARNESS_WRITE_CODE_CACHE: '1' },
        stdio: 'ignore',
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
