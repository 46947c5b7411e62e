import { describe, expect, test } from 'vitest'
import type { SlurmJobIdentity } from '../../../../../src/sessions/backends/slurm/jobs.js'
import { stopJob } from '../../../../../src/sessions/backends/slurm/stop.js'
import { stubSlurm } from '../../../../helpers/slurm-stub.js'

const ID: SlurmJobIdentity = { cluster: 'hs1', job_id: '100010', submit_time: '2026-12-03T11:00:00' }
const row = (state: string, submit = ID.submit_time) => ({
  stdout: `100010|hs1|${submit}|${state}|None|0|\n`,
})

/** squeue answers the states in turn (the last one repeats). */
function states(...answers: { stdout: string }[]) {
  let i = 0
  return () => answers[Math.min(i++, answers.length - 1)] ?? { stdout: '' }
}

describe('stopJob: TERM to the agent through the job script, scancel after the grace', () => {
  test('a running job that ends within the grace gets USR1 to its script and no scancel', async () => {
    const { exec, calls } = stubSlurm({
      squeue: states(row('RUNNING'), row('RUNNING'), row('COMPLETED')),
      scancel: {},
    })
    const outcome = await stopJob(exec, ID, { graceMs: 60_000, pollMs: 1 })
    expect(outcome).toEqual({
      kind: 'stopped',
      view: { kind: 'exited', state: 'COMPLETED', exitCode: 0 },
      forced: false,
    })
    expect(calls.filter((call) => call.tool === 'scancel').map((call) => call.args)).toEqual([
      ['--me', '--batch', '--signal=USR1', '--', '100010'],
    ])
  })

  test('a job still running after the grace is cancelled', async () => {
    const { exec, calls } = stubSlurm({
      squeue: states(row('RUNNING'), row('RUNNING'), row('RUNNING'), row('RUNNING'), row('CANCELLED')),
      scancel: {},
    })
    const outcome = await stopJob(exec, ID, { graceMs: 0, pollMs: 1 })
    expect(outcome).toEqual({ kind: 'stopped', view: { kind: 'cancelled' }, forced: true })
    expect(calls.filter((call) => call.tool === 'scancel').map((call) => call.args)).toEqual([
      ['--me', '--batch', '--signal=USR1', '--', '100010'],
      ['--me', '--', '100010'],
    ])
  })

  test('a queued job is cancelled at once (no agent runs to be told)', async () => {
    const { exec, calls } = stubSlurm({ squeue: states(row('PENDING'), row('CANCELLED')), scancel: {} })
    expect(await stopJob(exec, ID, { graceMs: 60_000, pollMs: 1 })).toEqual({
      kind: 'stopped',
      view: { kind: 'cancelled' },
      forced: false,
    })
    expect(calls.filter((call) => call.tool === 'scancel').map((call) => call.args)).toEqual([
      ['--me', '--', '100010'],
    ])
  })

  test('another job under the id (another submit time) is never signalled', async () => {
    const { exec, calls } = stubSlurm({ squeue: row('RUNNING', '2026-12-03T11:00:01'), scancel: {} })
    expect(await stopJob(exec, ID, { graceMs: 0, pollMs: 1 })).toEqual({ kind: 'unverified' })
    expect(calls.some((call) => call.tool === 'scancel')).toBe(false)
  })

  test('an id that changed hands during the grace is not cancelled', async () => {
    const { exec, calls } = stubSlurm({
      squeue: states(row('RUNNING'), row('RUNNING'), row('RUNNING', '2026-12-03T11:00:09')),
      scancel: {},
    })
    expect(await stopJob(exec, ID, { graceMs: 0, pollMs: 1 })).toEqual({ kind: 'unverified' })
    expect(calls.filter((call) => call.tool === 'scancel')).toHaveLength(1)
  })

  test('an ended or forgotten job: nothing is signalled', async () => {
    for (const answer of [row('COMPLETED'), { stdout: '' }]) {
      const { exec, calls } = stubSlurm({ squeue: answer })
      expect((await stopJob(exec, ID, { graceMs: 0, pollMs: 1 })).kind).toBe('gone')
      expect(calls.every((call) => call.tool === 'squeue')).toBe(true)
    }
  })
})
