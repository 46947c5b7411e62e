// `npm test`: the build, then every test, with the lint and the type check running beside them. The type check
// needs one core for about 8 s and the suite leaves gaps while its workers wait on the processes they start,
// so running the checks first only added their time to the total. Their output is printed once the tests
// end, so nothing interleaves; the exit status is the first failure's (build, tests, type check, lint), else 0.
// Arguments go to vitest (`npm test -- test/unit/sessions/record/store.test.ts`).
// Each part also runs alone (docs/development/README.md): `npm run test:fast` (the unit and port tests that
// start no process but git, no build: the daily loop), `test:unit`, `test:e2e` (the end-to-end and reliability
// tests, both runtimes), `test:real` (the real agent CLIs), `test:checks` (type check and lint). The first
// argument names the part (`node scripts/test.mjs e2e test/e2e/run.test.ts`); without one, all of them.
// Both runtimes are proven without running every end-to-end test twice (SPEC §9): the whole suite runs with
// the native executable as the harness under test (HARNESS_TEST_RUNTIME=native, docs/development/native.md),
// and then the files in NODE_PASS run again on node: those whose subject is what differs between the runtimes
// (signals, process groups and trees, pid identity, terminals, fs durability and fs.watch, torn writes, the
// lock). The in-process tests cover the rest of the node path. Without a native executable (a platform bun
// does not build for) everything runs once on node and says so, except under CI, where that is a failure.
// HARNESS_TEST_RUNTIME=node runs everything once on node.
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
const PARTS = {
  fast: { build: false, projects: ['unit'], checks: false },
  unit: { build: false, projects: ['unit'], checks: false },
  e2e: { build: true, projects: ['e2e'], checks: false },
  real: { build: true, projects: ['real'], checks: false },
  checks: { build: false, projects: [], checks: true },
  all: { build: true, projects: null, checks: true },
}
const partName = process.argv[2] in PARTS ? process.argv[2] : 'all'
const part = PARTS[partName]
const checks = part.checks
  ? [
      ['typecheck', run(bin('tsc'), ['--noEmit', ...typecheckState], true)],
      ['lint', run(bin('biome'), ['check', '.'], true)],
    ]
  : []
/** The files that run on both runtimes: the native pass runs them too, this list runs them again on node. */
const NODE_PASS = [
  'test/reliability/', // torn records under SIGKILL, lost updates under the lock, random kills of runs, the stress
  'test/e2e/run.test.ts', // the core run: argv, exit codes, detached supervisor, kill of a tree
  'test/e2e/stop-survives.test.ts', // a stop request outliving its client; the supervisor stops the tree
  'test/e2e/foreground-signals.test.ts', // signals to a foreground run and its process group
  'test/e2e/liveness.test.ts', // pid identity: reuse, boot, namespaces
  'test/e2e/interactive.test.ts', // a real terminal: Ctrl-C, hang-up, the interactive argv
  'test/e2e/tmux.test.ts', // runs hosted in tmux
  'test/e2e/watch.test.ts', // fs.watch under list --watch
  'test/e2e/disk-faults.test.ts', // a full disk and a read-only store
  'test/e2e/timeout.test.ts', // run --timeout kept by each kind of supervisor
]

const userArgs = process.argv.slice(partName === 'all' && !(process.argv[2] in PARTS) ? 2 : 3)
const filters = userArgs.filter((arg) => !arg.startsWith('-'))
const flags = userArgs.filter((arg) => arg.startsWith('-'))
const nativeBuilt = () => existsSync(fileURLToPath(new URL('../dist/harness-native', import.meta.url)))

/** vitest over the part's projects (all of them for `npm test`), with the user's arguments. */
function vitest(env, extra = []) {
  const projects = (part.projects ?? []).flatMap((project) => ['--project', project])
  return run(bin('vitest'), ['run', ...projects, ...extra, ...userArgs], false, { ...process.env, ...env })
}

let code = 0
if (part.build) {
  const build = await run(process.execPath, [fileURLToPath(new URL('build.mjs', import.meta.url))], false)
  code = build.code
}
if (partName === 'fast' && !interrupted) {
  // The unit and port tests but those tagged `process`; test/helpers/fast-lane.ts refuses any other process.
  code ||= (await vitest({ HARNESS_TEST_LANE: 'fast' }, ['--tags-filter', '!process'])).code
} else if (partName === 'unit' && !interrupted) {
  code ||= (await vitest({})).code
} else if (part.projects?.length !== 0 && code === 0 && !interrupted) {
  const native = process.env.HARNESS_TEST_RUNTIME !== 'node' && nativeBuilt()
  if (native) {
    process.stdout.write('The tests, with the native executable as the harness under test:\n')
    code ||= (await vitest({ HARNESS_TEST_RUNTIME: 'native' })).code
    // On node again: NODE_PASS, or the part of it the arguments name (a file of it, or a folder holding one).
    const nodeFiles = filters.length
      ? NODE_PASS.filter((file) => filters.some((filter) => file.includes(filter) || filter.includes(file)))
      : NODE_PASS
    const withE2e = part.projects === null || part.projects.includes('e2e')
    if (withE2e && nodeFiles.length && !interrupted) {
      process.stdout.write('\nThe tests of what differs between the runtimes, again on node:\n')
      const node = await run(bin('vitest'), ['run', '--project', 'e2e', ...flags, ...nodeFiles], false, {
        ...process.env,
        HARNESS_TEST_RUNTIME: 'node',
      })
      code ||= node.code
    }
  } else {
    if (process.env.HARNESS_TEST_RUNTIME !== 'node') {
      process.stdout.write('no native executable (dist/harness-native): the tests run on node only\n')
      if (process.env.CI) code ||= 1
    }
    code ||= (await vitest({ HARNESS_TEST_RUNTIME: 'node' })).code
  }
}
for (const [name, pending] of checks) {
  const { code: checkCode, output } = await pending
  process.stdout.write(output)
  process.stdout.write(`${name}: ${checkCode === 0 ? 'passed' : 'failed'}\n`)
  code ||= checkCode
}
process.exitCode = interrupted || code
