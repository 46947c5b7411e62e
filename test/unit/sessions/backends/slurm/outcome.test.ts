import { describe, expect, it } from 'vitest'
import { jobExit } from '../../../../../src/sessions/backends/slurm/outcome.js'
import type { RunReport } from '../../../../../src/sessions/backends/slurm/spool.js'

const report = (fields: Partial<RunReport>): RunReport => ({
  node: 'n1',
  started: '2026-12-03T14:00:00Z',
  exitCode: null,
  endedBy: null,
  setupError: null,
  sent: null,
  ...fields,
})

describe("how a job's run ended, from Slurm's view and the job's own files", () => {
  it('a job still queued or running, or a foreign one, has not ended for this record', () => {
    expect(jobExit({ kind: 'queued', reason: 'Priority' }, null)).toBeNull()
    expect(jobExit({ kind: 'running', state: 'RUNNING' }, report({ exitCode: 0 }))).toBeNull()
    expect(jobExit({ kind: 'foreign' }, report({ exitCode: 0 }))).toBeNull()
  })

  it("the exit-code file is the truth; Slurm's code a fallback", () => {
    const exited = { kind: 'exited', state: 'FAILED', exitCode: 1 } as const
    expect(jobExit(exited, report({ exitCode: 7, endedBy: 'exit' }))).toEqual({ exitCode: 7, signal: null })
    expect(jobExit(exited, null)).toEqual({ exitCode: 1, signal: null })
  })

  it('a job Slurm has forgotten is settled from its exit-code file; without one nothing says how it ended', () => {
    expect(jobExit({ kind: 'forgotten' }, report({ exitCode: 3, endedBy: 'exit' }))).toEqual({
      exitCode: 3,
      signal: null,
    })
    expect(jobExit({ kind: 'forgotten' }, null)).toBeNull()
  })

  it("harness's own stop is a stop; a time limit is PAUSED timeout", () => {
    const exited = { kind: 'exited', state: 'COMPLETED', exitCode: 0 } as const
    expect(jobExit(exited, report({ exitCode: 143, endedBy: 'stop' }))).toMatchObject({ stopped: true })
    expect(jobExit(exited, report({ exitCode: 143, endedBy: 'timeout' }))).toMatchObject({
      pausedFor: 'timeout',
    })
    expect(jobExit({ kind: 'timeout', state: 'TIMEOUT' }, null)).toMatchObject({
      pausedFor: 'timeout',
    })
  })

  it('a node that failed is PAUSED interrupted, though its TERM made the job script say timeout', () => {
    const failed = { kind: 'interrupted', state: 'NODE_FAIL' } as const
    expect(jobExit(failed, report({ exitCode: 143, endedBy: 'timeout' }))).toEqual({
      exitCode: 143,
      signal: null,
      pausedFor: 'interrupted',
    })
  })
})
