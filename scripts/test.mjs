// `npm test`: the build, then the tests, with the lint and the type check running beside them. The type check
// needs one core for about 8 s and the suite leaves gaps while its workers wait on the processes they start,
// so running the checks first only added their time to the total. Their output is printed once the tests
// end, so nothing interleaves; the exit status is the first failure's (build, tests, type check, lint), else 0.
// Arguments go to vitest (`npm test -- test/unit/sessions/record/store.test.ts`).
// The end-to-end tests then run a second time with the native executable as the harness under test
// (HARNESS_TEST_RUNTIME=native, docs/native.md): the first pass proves the node runtime, the second bun's.
// Without a native executable (a platform bun does not build for) that pass is skipped and said so, except
// under CI, where it is a failure.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url))

// A signal to this script (CI cancelling the job, Ctrl-C) goes on to every command still running, so none is
// left behind; each then ends, and the status says which signal ended the run.
const running = new Set()
let interrupted = 0
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted = 128 + constants.signals[signal]
    for (const child of running) child.kill(signal)
  })
}

/** Runs a command to its end; `capture` keeps its output (both streams, in order) instead of passing it on. */
function run(command, args, capture, env = process.env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: root,
      env,
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    })
    running.add(child)
    const chunks = []
    if (capture) for (const stream of [child.stdout, child.stderr]) stream.on('data', (c) => chunks.push(c))
    child.on('error', (error) => resolve({ code: 1, output: `${command}: ${error.message}\n` }))
    child.on('close', (code, signal) => {
      running.delete(child)
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString() })
    })
  })
}

// The type check keeps what it learnt between runs (under node_modules/.cache, which a fresh clone lacks), so a
// second `npm test` re-checks only what changed: about 5 s of CPU instead of 12 s on a 2-core machine.
const typecheckState = [
  '--incremental',
  '--tsBuildInfoFile',
  'node_modules/.cache/harness/tsconfig.tsbuildinfo',
]
const checks = [
  ['typecheck', run(bin('tsc'), ['--noEmit', ...typecheckState], true)],
  ['lint', run(bin('biome'), ['check', '.'], true)],
]
const build = await run(process.execPath, [fileURLToPath(new URL('build.mjs', import.meta.url))], false)
const tests =
  build.code === 0 && !interrupted
    ? await run(bin('vitest'), ['run', ...process.argv.slice(2)], false)
    : build
let code = build.code || tests.code
if (build.code === 0 && !interrupted) {
  if (existsSync(fileURLToPath(new URL('../dist/harness-native', import.meta.url)))) {
    process.stdout.write(
      '\nThe end-to-end tests again, against the native executable (HARNESS_TEST_RUNTIME=native):\n',
    )
    const args = ['run', '--project', 'e2e', '--passWithNoTests', ...process.argv.slice(2)]
    const native = await run(bin('vitest'), args, false, { ...process.env, HARNESS_TEST_RUNTIME: 'native' })
    code ||= native.code
  } else {
    process.stdout.write(
      '\nno native executable (dist/harness-native): the end-to-end tests ran on node only\n',
    )
    if (process.env.CI) code ||= 1
  }
}
for (const [name, pending] of checks) {
  const { code: checkCode, output } = await pending
  process.stdout.write(output)
  process.stdout.write(`${name}: ${checkCode === 0 ? 'passed' : 'failed'}\n`)
  code ||= checkCode
}
process.exitCode = interrupted || code
