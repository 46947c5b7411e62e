// Bundles src/main.ts and every dependency into one CommonJS file, dist/harness.cjs.
// CommonJS because each lazily imported module then also requires its node built-ins lazily (an ESM bundle
// hoists every built-in import to the top), and because Node's single-executable support wants one CJS file.
// Dynamic imports stay inside the same file and are evaluated on first use, so a command pays only for the
// modules it actually uses.
import { readFileSync } from 'node:fs'
import { build } from 'esbuild'

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
