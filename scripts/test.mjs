// `npm test` after lint and build: the type check and the tests run side by side. The check needs one core for
// about 8 s and the suite leaves gaps while its workers wait on the processes they start, so running them one
// after the other only added the check's time to the total. The check's output is printed once the tests end,
// so the two never interleave; the exit status is the first failure's (tests first), else 0.
// Arguments go to vitest (`npm test -- test/unit/store.test.ts`).
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const bin = (name) => fileURLToPath(new URL(join('..', 'node_modules', '.bin', name), import.meta.url))

/** Runs a command to its end; `capture` keeps its output (both streams, in order) instead of passing it on. */
function run(command, args, capture) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' })
    const chunks = []
    if (capture) for (const stream of [child.stdout, child.stderr]) stream.on('data', (c) => chunks.push(c))
    child.on('error', (error) => resolve({ code: 1, output: `${command}: ${error.message}\n` }))
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output: Buffer.concat(chunks).toString() }),
    )
  })
}

const typecheck = run(bin('tsc'), ['--noEmit'], true)
const tests = await run(bin('vitest'), ['run', ...process.argv.slice(2)], false)
const checked = await typecheck
process.stdout.write(checked.output)
process.stdout.write(checked.code === 0 ? 'typecheck: no errors\n' : 'typecheck: failed\n')
process.exitCode = tests.code || checked.code
