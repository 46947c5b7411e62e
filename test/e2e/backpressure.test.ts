import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { HARNESS_BIN } from '../helpers/cli.js'
import { tmpPlainDir } from '../helpers/tmp.js'

const FLOOD = fileURLToPath(new URL('../fixtures/procs/flood.mjs', import.meta.url))
const MIB = 1024 * 1024
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The peak resident set of a live process (Linux: VmHWM), in bytes; null once it is gone. */
function peakRss(pid: number): number | null {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb === undefined ? null : Number(kb) * 1024
  } catch {
    return null
  }
}

function logSize(dir: string): number {
  try {
    const logs = join(dir, '.harness', 'logs')
    return readdirSync(logs).reduce((sum, name) => sum + statSync(join(logs, name)).size, 0)
  } catch {
    return 0
  }
}

/**
 * Bounded memory (docs/security.md): an agent printing 500 MB to a harness whose stdout is read slowly. Without
 * backpressure harness holds whatever its reader has not taken yet (hundreds of MB); with it, the agent waits.
 */
describe.skipIf(process.platform !== 'linux')(
  'bounded memory with a slow reader (reads /proc: Linux only)',
  () => {
    test('an agent printing 500 MB through a slow reader keeps harness under 150 MB RSS; every byte arrives', async () => {
      const { dir, env } = tmpPlainDir()
      const harness = spawn(HARNESS_BIN, ['run', '-a', 'exec', '--', process.execPath, FLOOD, '500'], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'ignore'],
      })
      const pid = harness.pid as number
      const exited = new Promise<number | null>((resolve) => harness.on('exit', (code) => resolve(code)))
      let peak = 0
      const sample = () => {
        peak = Math.max(peak, peakRss(pid) ?? 0)
      }
      let received = 0
      harness.stdout.on('data', (chunk: Buffer) => {
        received += chunk.length
      })
      // A reader that takes nothing for a while: until 200 MB went by (what an unbounded harness would then
      // hold), or three seconds passed (a harness with backpressure makes the agent wait, and the log stops).
      harness.stdout.pause()
      for (let waited = 0; waited < 3000 && logSize(dir) < 200 * MIB; waited += 50) {
        await sleep(50)
        sample()
      }
      // Then slowly, a little at a time, for a while; then as fast as it can.
      for (let i = 0; i < 20; i++) {
        harness.stdout.resume()
        await sleep(5)
        harness.stdout.pause()
        await sleep(20)
        sample()
      }
      harness.stdout.resume()
      const timer = setInterval(sample, 50)
      const code = await exited
      clearInterval(timer)
      expect(code).toBe(0)
      expect(received).toBe(500 * MIB)
      expect(peak).toBeGreaterThan(0)
      expect(peak).toBeLessThan(150 * 1000 * 1000)
    })
  },
)
