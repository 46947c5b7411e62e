import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
// @ts-expect-error: plain JavaScript
import { findBun } from '../../scripts/native.mjs'
import { probe } from '../fixtures/runtime-probe.js'

const PROBE = fileURLToPath(new URL('../fixtures/runtime-probe.ts', import.meta.url))

/** What both runtimes must answer (src/runtime.ts): the same results, as node's own calls give them. */
const EXPECTED = {
  output: { stdout: 'out', stderr: 'err', exitCode: 0, failed: false },
  exit: { stdout: 'partial', stderr: '', exitCode: 3, failed: true },
  signal: { stdout: '', stderr: '', exitCode: 1, failed: true },
  input: { stdout: 'fed through stdin\n.', stderr: '', exitCode: 0, failed: false },
  unicode: { stdout: 'café ✓', stderr: '', exitCode: 0, failed: false },
  missing: { rejected: { name: 'Error', code: 'ENOENT' } },
  aborted: { rejected: { name: 'AbortError', code: 'ABORT_ERR' } },
  deadline: 'timeout',
  overflow: { exitCode: 1, failed: true },
  sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
  sha1: 'a9993e364706816aba3e25717850c26c9cd0d89d',
  hmac: '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  bytes: 32,
}

describe('runtime.ts: one answer under node and under bun', () => {
  test('under node (this process)', async () => {
    expect(await probe()).toMatchObject(EXPECTED)
  })

  // The native executable's runtime; bun comes with the dev dependencies (scripts/native.mjs finds it).
  const bun: string | null = findBun()
  test.skipIf(!bun)('under bun, as inside the native executable', () => {
    const answers = JSON.parse(execFileSync(bun as string, [PROBE], { encoding: 'utf8' }))
    expect(answers).toMatchObject(EXPECTED)
  })
})
