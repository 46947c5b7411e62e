// `npm run stress`: the stress of docs/security.md ("Crashes, interrupts, shared steps and deadlines") in full,
// with its figures: 10 rounds of 60 random SIGKILLs of foreground and detached runs whose agents exit at once
// (then no record RUNNING or unverified), a tmux pane of a foreground interactive run killed 20 times (20
// PAUSED hangup), 3 rounds of 50 parallel runs in one repository (all start). `npm test` runs one round of
// each (test/reliability/stress.test.ts). Builds first; the harness under test is the native executable when
// there is one, else node; `--node` runs it on node. Other arguments go to vitest.
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { constants } from 'node:os'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const onNode = args.includes('--node')
const rest = args.filter((arg) => arg !== '--node')

let current
let interrupted = 0
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    interrupted = 128 + constants.signals[signal]
    current?.kill(signal)
  })
}

function run(command, commandArgs, env = process.env) {
  return new Promise((resolve) => {
    current = spawn(command, commandArgs, { cwd: root, env, stdio: 'inherit' })
    current.on('error', () => resolve(1))
    current.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

let code = await run(process.execPath, [fileURLToPath(new URL('build.mjs', import.meta.url))])
if (code === 0 && !interrupted) {
  const native = !onNode && existsSync(fileURLToPath(new URL('../dist/harness-native', import.meta.url)))
  process.stdout.write(
    `stress, full, with ${native ? 'the native executable' : 'node'} as the harness under test\n`,
  )
  const vitest = fileURLToPath(new URL('../node_modules/.bin/vitest', import.meta.url))
  code = await run(vitest, ['run', '--project', 'e2e', 'test/reliability/stress.test.ts', ...rest], {
    ...process.env,
    HARNESS_STRESS: 'full',
    HARNESS_TEST_RUNTIME: native ? 'native' : 'node',
  })
}
process.exitCode = interrupted || code
