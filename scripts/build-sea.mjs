// `npm run build:sea`: one native executable (Node's single-executable-application support) made from what
// `npm run build` made: its main script is the small entry (scripts/sea-main.cjs with dist/fast.cjs), and the
// bundle and its V8 code cache ride along as assets, compiled only when the small entry leaves a command to
// them. Usage: node scripts/build-sea.mjs [output]
import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))
const output = resolve(process.argv[2] ?? join(root, 'dist', 'harness-sea'))
const work = mkdtempSync(join(tmpdir(), 'harness-sea-'))
try {
  const blob = join(work, 'harness.blob')
  const config = join(work, 'sea-config.json')
  const main = join(work, 'sea-main.cjs')
  await build({
    entryPoints: [join(root, 'scripts', 'sea-main.cjs')],
    outfile: main,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  })
  writeFileSync(
    config,
    JSON.stringify({
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      // The main script is small: compiling it costs less than deserialising a cache would.
      useCodeCache: false,
      assets: {
        'harness.cjs': join(root, 'dist', 'harness.cjs'),
        'harness.cjs.cache': join(root, 'dist', 'harness.cjs.cache'),
      },
    }),
  )
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' })
  copyFileSync(process.execPath, output)
  chmodSync(output, 0o755)
  const postject = createRequire(import.meta.url).resolve('postject/dist/cli.js')
  execFileSync(
    process.execPath,
    [
      postject,
      output,
      'NODE_SEA_BLOB',
      blob,
      '--sentinel-fuse',
      'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  )
  // A binary that cannot even print its version must not be left looking usable.
  const version = execFileSync(output, ['--version'], { encoding: 'utf8' }).trim()
  console.log(`${output} (harness ${version})`)
} catch (error) {
  rmSync(output, { force: true })
  throw error
} finally {
  rmSync(work, { recursive: true, force: true })
}
