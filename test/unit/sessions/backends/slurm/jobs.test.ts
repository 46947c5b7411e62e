import { describe, expect, test } from 'vitest'
import {
  exitCodeOf,
  parseSqueue,
  type SlurmJobIdentity,
  squeueArgs,
  viewJobs,
  viewOf,
} from '../../../../../src/sessions/backends/slurm/jobs.js'
import { stubSlurm } from '../../../../helpers/slurm-stub.js'

const ID: SlurmJobIdentity = { cluster: 'hs1', job_id: '100002', submit_time: '2026-12-03T10:48:03' }
const line = (
  id: string,
  state: string,
  reason = 'None',
  exit = '0',
  submit = ID.submit_time,
  cluster = 'hs1',
) => `${id}|${cluster}|${submit}|${state}|${reason}|${exit}|`

describe('squeue: one text-format call for many jobs', () => {
  test('the argv: the user own jobs, every state, the ids given, the fields harness reads', () => {
    expect(squeueArgs(['7', '8'])).toEqual([
      '--me',
      '--noheader',
      '--states=all',
      '--jobs=7,8',
      '--Format=JobID:|,Cluster:|,SubmitTime:|,State:|,Reason:|,exit_code:|',
    ])
  })

  test('parses what squeue 22.05 prints, and skips lines it does not recognise', () => {
    const text = [
      '100001|hs1|2026-12-03T10:47:44|COMPLETED|None|0|',
      '100002|hs1|2026-12-03T10:48:03|FAILED|NonZeroExitCode|1792|',
      '100004|hs1|2026-12-03T10:48:03|PENDING|BeginTime|0|',
      'CLUSTER: hs1',
      'garbage',
      '|hs1|x|RUNNING|None|0|',
      '',
    ].join('\n')
    expect(parseSqueue(text)).toEqual([
      {
        jobId: '100001',
        cluster: 'hs1',
        submitTime: '2026-12-03T10:47:44',
        state: 'COMPLETED',
        reason: 'None',
        waitStatus: 0,
      },
      {
        jobId: '100002',
        cluster: 'hs1',
        submitTime: '2026-12-03T10:48:03',
        state: 'FAILED',
        reason: 'NonZeroExitCode',
        waitStatus: 1792,
      },
      {
        jobId: '100004',
        cluster: 'hs1',
        submitTime: '2026-12-03T10:48:03',
        state: 'PENDING',
        reason: 'BeginTime',
        waitStatus: 0,
      },
    ])
  })

  test('a wait status is an exit code, or 128 + the signal', () => {
    expect(exitCodeOf(0)).toBe(0)
    expect(exitCodeOf(1792)).toBe(7)
    expect(exitCodeOf(768)).toBe(3)
    expect(exitCodeOf(9)).toBe(137)
    expect(exitCodeOf(15)).toBe(143)
  })
})

describe('the verdict on a job (SPEC §14)', () => {
  const view = (state: string, reason?: string, exit?: string) =>
    viewOf(ID, parseSqueue(line(ID.job_id, state, reason, exit))[0])

  test.each([
    ['PENDING', 'Resources', { kind: 'queued', reason: 'Resources' }],
    ['PENDING', 'Priority', { kind: 'queued', reason: 'Priority' }],
    ['CONFIGURING', 'None', { kind: 'queued', reason: 'CONFIGURING' }],
    ['RUNNING', 'None', { kind: 'running', state: 'RUNNING' }],
    ['COMPLETING', 'None', { kind: 'running', state: 'COMPLETING' }],
    ['SUSPENDED', 'None', { kind: 'running', state: 'SUSPENDED' }],
    ['SOME_NEW_STATE', 'None', { kind: 'running', state: 'SOME_NEW_STATE' }],
    ['TIMEOUT', 'TimeLimit', { kind: 'timeout', state: 'TIMEOUT' }],
    ['DEADLINE', 'None', { kind: 'timeout', state: 'DEADLINE' }],
    ['NODE_FAIL', 'None', { kind: 'interrupted', state: 'NODE_FAIL' }],
    ['PREEMPTED', 'None', { kind: 'interrupted', state: 'PREEMPTED' }],
    ['BOOT_FAIL', 'None', { kind: 'interrupted', state: 'BOOT_FAIL' }],
    ['CANCELLED', 'None', { kind: 'cancelled' }],
  ])('%s (%s)', (state, reason, expected) => {
    expect(view(state, reason)).toEqual(expected)
  })

  test('COMPLETED and FAILED: exited, the wait status only a fallback for the exit code file', () => {
    expect(view('COMPLETED', 'None', '0')).toEqual({ kind: 'exited', state: 'COMPLETED', exitCode: 0 })
    expect(view('FAILED', 'NonZeroExitCode', '1792')).toEqual({
      kind: 'exited',
      state: 'FAILED',
      exitCode: 7,
    })
    expect(view('OUT_OF_MEMORY', 'None', '')).toEqual({
      kind: 'exited',
      state: 'OUT_OF_MEMORY',
      exitCode: null,
    })
  })

  test('a job Slurm does not list is forgotten; one with another submit time or cluster is foreign', () => {
    expect(viewOf(ID, undefined)).toEqual({ kind: 'forgotten' })
    const [other] = parseSqueue(line(ID.job_id, 'RUNNING', 'None', '0', '2026-12-03T10:48:04'))
    expect(viewOf(ID, other)).toEqual({ kind: 'foreign' })
    const [elsewhere] = parseSqueue(line(ID.job_id, 'RUNNING', 'None', '0', ID.submit_time, 'hs2'))
    expect(viewOf(ID, elsewhere)).toEqual({ kind: 'foreign' })
  })
})

describe('viewJobs', () => {
  test('fifty jobs, one squeue: each identity gets its own verdict, in order', async () => {
    const ids = Array.from({ length: 50 }, (_, i): SlurmJobIdentity => ({ ...ID, job_id: String(200 + i) }))
    const { exec, calls } = stubSlurm({
      squeue: {
        stdout: ids
          .slice(0, 49)
          .map((id, i) => line(id.job_id, i % 2 ? 'RUNNING' : 'PENDING', 'Priority'))
          .join('\n'),
      },
    })
    const views = await viewJobs(exec, ids)
    expect(calls).toHaveLength(1)
    expect(calls[0]?.args).toContain(`--jobs=${ids.map((id) => id.job_id).join(',')}`)
    expect(views[0]).toEqual({ kind: 'queued', reason: 'Priority' })
    expect(views[1]).toEqual({ kind: 'running', state: 'RUNNING' })
    expect(views[49]).toEqual({ kind: 'forgotten' })
  })

  test('squeue knowing none of the ids fails: every job is forgotten, and that is no error', async () => {
    const { exec } = stubSlurm({
      squeue: { exitCode: 1, stderr: 'slurm_load_jobs error: Invalid job id specified\n' },
    })
    expect(await viewJobs(exec, [ID])).toEqual([{ kind: 'forgotten' }])
  })

  test('no sessions: no squeue at all', async () => {
    const { exec, calls } = stubSlurm({})
    expect(await viewJobs(exec, [])).toEqual([])
    expect(calls).toEqual([])
  })

  test('an unreachable controller is exit 5 naming squeue', async () => {
    const { exec } = stubSlurm({
      squeue: {
        exitCode: 1,
        stderr:
          'squeue: error: Unable to contact slurm controller (connect failure)\nslurm_load_jobs error: Unable to contact slurm controller (connect failure)\n',
      },
    })
    await expect(viewJobs(exec, [ID])).rejects.toMatchObject({
      exitCode: 5,
      code: 'SLURM_UNREACHABLE',
      message: expect.stringContaining('squeue cannot reach the Slurm controller'),
    })
  })
})
