import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The end-to-end tests run the built binary as a user would; `npm test` builds it first. Tests that use the
 * store in-process seal records with a key under a private state folder, never the user's own.
 */
export default function setup(): () => void {
  const bundle = fileURLToPath(new URL('../../dist/harness.cjs', import.meta.url))
  if (!existsSync(bundle)) throw new Error('dist/harness.cjs is missing: run "npm run build" (npm test does)')
  // The runtime under test (cli.ts, HARNESS_TEST_RUNTIME): the tests run its executable directly, and a
  // `harness` found on PATH (bin/harness) picks the same one through HARNESS_RUNTIME.
  const native = process.env.HARNESS_TEST_RUNTIME === 'native'
  const executable = fileURLToPath(new URL('../../dist/harness-native', import.meta.url))
  if (native && !existsSync(executable)) {
    throw new Error('HARNESS_TEST_RUNTIME=native, but dist/harness-native is missing: run "npm run build"')
  }
  process.env.HARNESS_RUNTIME = native ? 'native' : 'node'
  // The runtime the store workers of test/reliability run under (test/fixtures/workers.ts): bun's, the
  // runtime inside the native executable, when that is under test.
  if (native) {
    const script = fileURLToPath(new URL('../../scripts/native.mjs', import.meta.url))
    process.env.HARNESS_TEST_BUN = execFileSync(process.execPath, [script, 'bun'], {
      encoding: 'utf8',
    }).trim()
  }
  const state = mkdtempSync(join(tmpdir(), 'harness-test-state-'))
  process.env.XDG_STATE_HOME = state
  // The per-process template repositories (tmp.ts) live here, so the run's end removes them: a test worker is
  // stopped without running its own exit handlers, which left one template folder per worker behind.
  const templates = mkdtempSync(join(tmpdir(), 'harness-test-templates-'))
  process.env.HARNESS_TEST_TEMPLATES = templates
  return () => {
    rmSync(state, { recursive: true, force: true })
    rmSync(templates, { recursive: true, force: true })
  }
}
