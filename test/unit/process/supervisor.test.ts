import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { agentExit } from '../../../src/process/supervisor.js'

// How an agent's run ended, from what the spawn and the wait showed (the spawned agents are in the e2e tests).

const notStopped = { stopSignal: null, stopped: false }

describe('agentExit', () => {
  it('keeps the exit code of an agent that ran', () => {
    expect(agentExit({ pid: 10, exitCode: 0, signal: null }, notStopped)).toEqual({
      exitCode: 0,
      signal: null,
      stopSignal: null,
      stopped: false,
    })
    expect(agentExit({ pid: 10, exitCode: 3, signal: null }, notStopped).exitCode).toBe(3)
  })

  it('keeps the signal an agent died of, with no exit code', () => {
    const exit = agentExit(
      { pid: 10, exitCode: null, signal: 'SIGTERM' },
      { stopSignal: 'SIGTERM', stopped: true },
    )
    expect(exit).toEqual({ exitCode: null, signal: 'SIGTERM', stopSignal: 'SIGTERM', stopped: true })
  })

  it('says why an agent that never got a pid did not start', { tags: ['process'] }, () => {
    const missing = Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT', path: 'nope' })
    const exit = agentExit({ pid: undefined, exitCode: null, signal: null, error: missing }, notStopped)
    expect(exit).toMatchObject({ exitCode: null, spawnError: 'command not found: nope' })
    // The kernel's own refusal of a command line too long (node throws it from spawn).
    const real = spawnSync('true', ['x'.repeat(200 * 1024)]).error as NodeJS.ErrnoException
    expect(
      agentExit({ pid: undefined, exitCode: null, signal: null, error: real }, notStopped).spawnError,
    ).toMatch(/^argument list too long \(E2BIG\)/)
  })

  it('counts an agent with neither exit code nor signal as not started, even with a pid', () => {
    const exit = agentExit({ pid: 10, exitCode: null, signal: null }, notStopped)
    expect(exit.exitCode).toBeNull()
    expect(exit.spawnError).toBe('the agent could not be started')
  })

  it('carries a failure to write the log only when there was one', () => {
    const logFailure = { code: 'ENOSPC', message: 'no space left on device', written: 10 }
    expect(agentExit({ pid: 10, exitCode: 0, signal: null }, notStopped, logFailure).logFailure).toEqual(
      logFailure,
    )
    expect('logFailure' in agentExit({ pid: 10, exitCode: 0, signal: null }, notStopped)).toBe(false)
  })
})
