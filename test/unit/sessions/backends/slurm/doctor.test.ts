import { expect, test } from 'vitest'
import { slurmChecks } from '../../../../../src/sessions/backends/slurm/doctor.js'
import { slurmMissing } from '../../../../../src/sessions/backends/slurm/tools.js'
import { stubSlurm } from '../../../../helpers/slurm-stub.js'

const CONFIG =
  'Configuration data as of 2026-12-03T11:00:00\nAccountingStorageType   = accounting_storage/none\nClusterName             = hs1\n'

test('doctor: the version, the cluster, and what --test-only says of a job with the configured options', async () => {
  const { exec, calls } = stubSlurm({
    sbatch: (args) =>
      args[0] === '--version'
        ? { stdout: 'slurm-wlm 22.05.8\n' }
        : {
            stderr:
              'sbatch: Job 100031 to start at 2026-12-03T11:00:01 using 1 processors on nodes hs1-n1 in partition gpu\n',
          },
    scontrol: { stdout: CONFIG },
  })
  expect(
    await slurmChecks(exec, { partition: 'gpu', time: '30', options: ['--qos=low'], env: ['API_KEY'] }),
  ).toEqual([
    { name: 'slurm', status: 'ok', detail: 'slurm-wlm 22.05.8, cluster hs1' },
    {
      name: 'slurm test-only',
      status: 'ok',
      detail:
        'Job 100031 to start at 2026-12-03T11:00:01 using 1 processors on nodes hs1-n1 in partition gpu',
    },
  ])
  const testOnlyCall = calls.find((call) => call.args[0] === '--test-only')
  expect(testOnlyCall?.options).toEqual({ exportOnly: ['API_KEY'] })
  const testOnly = testOnlyCall?.args ?? []
  expect(testOnly).toEqual(
    expect.arrayContaining([
      '--qos=low',
      '--partition=gpu',
      '--time=30',
      '--export=ALL',
      '--no-requeue',
      '--wrap=true',
    ]),
  )
  expect(testOnly).not.toContain('--')
})

test('doctor: no sbatch is one failing line saying so', async () => {
  const exec = async () => {
    throw slurmMissing('sbatch')
  }
  expect(await slurmChecks(exec, {})).toEqual([
    expect.objectContaining({
      name: 'slurm',
      status: 'fail',
      detail: expect.stringContaining('sbatch not found on PATH'),
    }),
  ])
})

test('doctor: an unreachable controller fails the cluster line and submits nothing', async () => {
  const { exec, calls } = stubSlurm({
    sbatch: { stdout: 'slurm-wlm 22.05.8\n' },
    scontrol: {
      exitCode: 1,
      stderr: 'scontrol: error: Unable to contact slurm controller (connect failure)\n',
    },
  })
  expect(await slurmChecks(exec, {})).toEqual([
    expect.objectContaining({
      name: 'slurm',
      status: 'fail',
      detail: expect.stringContaining('cannot reach the Slurm controller'),
    }),
  ])
  expect(calls.map((call) => call.tool)).toEqual(['sbatch', 'scontrol'])
})

test('doctor: a job Slurm would refuse fails the test-only line with its reason', async () => {
  const { exec } = stubSlurm({
    sbatch: (args) =>
      args[0] === '--version'
        ? { stdout: 'slurm-wlm 22.05.8\n' }
        : {
            exitCode: 1,
            stderr: 'sbatch: error: Batch job submission failed: Invalid partition name specified\n',
          },
    scontrol: { stdout: CONFIG },
  })
  expect((await slurmChecks(exec, { partition: 'nope' }))[1]).toEqual({
    name: 'slurm test-only',
    status: 'fail',
    detail: 'error: Batch job submission failed: Invalid partition name specified',
  })
})
