import childProcess from 'node:child_process'
import { syncBuiltinESMExports } from 'node:module'
import { basename } from 'node:path'

/*
 * The fast lane (`npm run test:fast`) runs the unit and port tests that start no process but git. It holds
 * itself to that: under HARNESS_TEST_LANE=fast every way of starting a process refuses any program but git, so
 * a test that starts one fails here and must be tagged `process` (it then runs in `npm test` only).
 */
export const FAST_LANE = process.env.HARNESS_TEST_LANE === 'fast'

/** Whether the fast lane lets `command` start: git only. */
export function startsInFastLane(command: unknown): boolean {
  return typeof command === 'string' && basename(command) === 'git'
}

if (FAST_LANE) guardProcesses()

function guardProcesses(): void {
  const methods = ['spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork'] as const
  const module = childProcess as unknown as Record<string, (...args: unknown[]) => unknown>
  for (const name of methods) {
    const original = module[name]
    if (!original) continue
    module[name] = function guarded(this: unknown, ...args: unknown[]) {
      // exec/execSync take a shell line: always a process beyond git; fork starts node.
      const command = name === 'exec' || name === 'execSync' || name === 'fork' ? undefined : args[0]
      if (!startsInFastLane(command)) {
        throw new Error(
          `the fast lane starts no process but git, and this test started ${String(args[0])}: tag it "process"`,
        )
      }
      return original.apply(this, args)
    }
  }
  // ESM imports of node:child_process read these bindings: make them the guarded ones too.
  syncBuiltinESMExports()
}
