import { describe, expect, test } from 'vitest'
import { SlurmConfigSchema } from '../../../../../src/config.js'
import {
  guardOptions,
  jobTimeLimit,
  sendBackLead,
  timeLimitSeconds,
} from '../../../../../src/sessions/backends/slurm/options.js'
import { submitRun } from '../../../../../src/sessions/backends/slurm/run.js'
import {
  parseSbatch,
  type SubmitRequest,
  sbatchArgs,
  submitJob,
} from '../../../../../src/sessions/backends/slurm/submit.js'
import { submitEnvironment } from '../../../../../src/sessions/backends/slurm/tools.js'
import { stubSlurm } from '../../../../helpers/slurm-stub.js'
import { tmpDir } from '../../../../helpers/tmp.js'

const REQUEST: SubmitRequest = {
  script: '/spool/harness-0/s1/run-1/job.sh',
  jobName: 'harness-s1',
  output: '/spool/harness-0/s1/run-1/log',
  error: '/spool/harness-0/s1/run-1/job.err',
  chdir: '/scratch',
  time: '30',
  partition: 'main',
  account: 'proj',
  options: ['--qos=low', '--exclusive'],
  envNames: ['ANTHROPIC_API_KEY', 'PATH'],
  sendBackSeconds: 90,
}

describe('sbatch', () => {
  test('the argv: the user options first, harness own after them, the script last after --', () => {
    expect(sbatchArgs(REQUEST)).toEqual([
      '--qos=low',
      '--exclusive',
      '--parsable',
      '--no-requeue',
      '--signal=B:TERM@90',
      '--export=ALL',
      '--time=30',
      '--partition=main',
      '--account=proj',
      '--job-name=harness-s1',
      '--output=/spool/harness-0/s1/run-1/log',
      '--error=/spool/harness-0/s1/run-1/job.err',
      '--open-mode=append',
      '--chdir=/scratch',
      '--',
      '/spool/harness-0/s1/run-1/job.sh',
    ])
  })

  test('no time, partition or account: none given', () => {
    const args = sbatchArgs({
      ...REQUEST,
      envNames: [],
      time: null,
      partition: undefined,
      account: undefined,
    })
    expect(args.some((arg) => /^--(time|partition|account)=/.test(arg))).toBe(false)
  })

  test('parses the job id of --parsable (with or without the cluster)', () => {
    expect(parseSbatch('100001\n')).toBe('100001')
    expect(parseSbatch('100001;hs1\n')).toBe('100001')
    expect(parseSbatch('Submitted batch job 5\n')).toBe(null)
    expect(parseSbatch('')).toBe(null)
  })

  test('submitJob: sbatch, then the identity as squeue prints it', async () => {
    const { exec, calls } = stubSlurm({
      sbatch: { stdout: '100007\n' },
      squeue: { stdout: '100007|hs1|2026-12-03T11:00:00|PENDING|None|0|\n' },
    })
    expect(await submitJob(exec, REQUEST)).toEqual({
      cluster: 'hs1',
      job_id: '100007',
      submit_time: '2026-12-03T11:00:00',
    })
    expect(calls.map((call) => call.tool)).toEqual(['sbatch', 'squeue'])
    expect(calls[0]?.options).toEqual({ exportOnly: ['ANTHROPIC_API_KEY', 'PATH'] })
    expect(calls[1]?.args).toContain('--jobs=100007')
  })

  test('a job is submitted with --export=ALL from Slurm variables and the named ones only, never NONE or a list of names', () => {
    // NONE or a list makes sbatch set SLURM_GET_USER_ENV=1: slurmd then loads the login environment, a second.
    const args = sbatchArgs(REQUEST)
    expect(args.filter((arg) => arg.startsWith('--export'))).toEqual(['--export=ALL'])
    const env = {
      PATH: '/usr/bin',
      HOME: '/home/me',
      ANTHROPIC_API_KEY: 'k',
      NOT_NAMED: 'x',
      SLURM_CONF: '/etc/slurm/slurm.conf',
      SBATCH_ACCOUNT: 'proj',
      SBATCH_EXPORT: 'NONE',
      SBATCH_EXPORT_FILE: '/home/me/env',
    }
    expect(submitEnvironment(env, ['ANTHROPIC_API_KEY', 'UNSET'])).toEqual({
      ANTHROPIC_API_KEY: 'k',
      SLURM_CONF: '/etc/slurm/slurm.conf',
      SBATCH_ACCOUNT: 'proj',
    })
  })

  test('a job whose identity cannot be read is cancelled, and the error says so', async () => {
    const { exec, calls } = stubSlurm({ sbatch: { stdout: '100008\n' }, squeue: { stdout: '' }, scancel: {} })
    await expect(submitJob(exec, REQUEST)).rejects.toMatchObject({ exitCode: 5, code: 'SLURM_FAILED' })
    expect(calls.at(-1)).toEqual({ tool: 'scancel', args: ['--', '100008'] })
  })

  test('sbatch refusing the job is exit 5 with what Slurm said', async () => {
    const { exec } = stubSlurm({
      sbatch: {
        exitCode: 1,
        stderr:
          'sbatch: error: invalid partition specified: nope\nsbatch: error: Batch job submission failed: Invalid partition name specified\n',
      },
    })
    await expect(submitJob(exec, REQUEST)).rejects.toMatchObject({
      exitCode: 5,
      code: 'SLURM_FAILED',
      message:
        'sbatch could not submit the job: Batch job submission failed: Invalid partition name specified',
    })
  })
})

describe('slurm.options are guarded', () => {
  test.each([
    '--qos=low',
    '--gres=gpu:1',
    '--mem=4G',
    '--constraint=a100&nvlink',
    '--exclusive',
    '--hold',
    '--time-min=10',
    '--comment=a value with spaces; $(and) `shell` text',
  ])('%s passes', (option) => {
    expect(guardOptions([option])).toEqual([option])
  })

  test.each([
    ['--export=ALL', 'sets --export itself'],
    ['--exp=ALL', 'sets --exp itself'],
    ['--e=x', 'sets --e itself'],
    ['--output=/home/me/x', 'sets --output itself'],
    ['--wrap=rm -rf ~', 'sets --wrap itself'],
    ['--signal=KILL@1', 'sets --signal itself'],
    ['--requeue', 'sets --requeue itself'],
    ['--time=10', 'sets --time itself'],
    ['--partition=x', 'sets --partition itself'],
    ['--clusters=other', 'sets --clusters itself'],
    ['--wait', 'sets --wait itself'],
    ['--qos', 'needs its value as --qos=VALUE'],
    ['-p', 'not a long option'],
    ['script.sh', 'not a long option'],
    ['--qos low', 'not a long option'],
    ['--qos=a\n--export=ALL', 'not a long option'],
    ['', 'not a long option'],
  ])('%j is refused: %s', (option, why) => {
    expect(() => guardOptions([option])).toThrow(
      expect.objectContaining({
        exitCode: 2,
        code: 'SLURM_OPTION_REFUSED',
        message: expect.stringContaining(why),
      }),
    )
  })
})

describe('config slurm.* and the time limit', () => {
  test('the schema takes what the docs name, and refuses what could be read as a flag', () => {
    const good = {
      partition: 'gpu',
      account: 'proj-1',
      time: '1-12:00:00',
      options: ['--qos=low'],
      spool: '/shared/spool',
      scratch: '/local/scratch',
      env: ['ANTHROPIC_API_KEY'],
    }
    expect(SlurmConfigSchema.parse(good)).toEqual(good)
    for (const bad of [
      { partition: '--export=ALL' },
      { account: '-x' },
      { time: '10 minutes' },
      { spool: 'relative/path' },
      { env: ['A=B'] },
      { unknown: 1 },
    ]) {
      expect(SlurmConfigSchema.safeParse(bad).success).toBe(false)
    }
  })

  test.each(['30', '30:00', '1:30:00', '2-0', '2-12:30', '2-12:30:00', 'UNLIMITED'])(
    'time %s is a Slurm time',
    (time) => {
      expect(SlurmConfigSchema.safeParse({ time }).success).toBe(true)
    },
  )

  test('a run --timeout is whole minutes, at least one; else slurm.time; else none', () => {
    expect(jobTimeLimit(1, '60')).toBe('1')
    expect(jobTimeLimit(60_000, undefined)).toBe('1')
    expect(jobTimeLimit(61_000, undefined)).toBe('2')
    expect(jobTimeLimit(null, '1-00:00:00')).toBe('1-00:00:00')
    expect(jobTimeLimit(null, undefined)).toBe(null)
  })
})

describe('the send-back lead (--signal=B:TERM@<lead>)', () => {
  test.each([
    ['30', 1800],
    ['2', 120],
    ['1:30', 90],
    ['1:30:00', 5400],
    ['2-0', 172_800],
    ['2-12:30', 217_800],
    ['2-12:30:05', 217_805],
  ])('time %s is %i s', (time, seconds) => {
    expect(timeLimitSeconds(time)).toBe(seconds)
  })

  test('no limit, or the partition default: null', () => {
    expect(timeLimitSeconds(null)).toBe(null)
    expect(timeLimitSeconds('UNLIMITED')).toBe(null)
    expect(timeLimitSeconds('INFINITE')).toBe(null)
  })

  test('a quarter of the limit, at least 10 s, at most 2 minutes; 2 minutes when the limit is unknown', () => {
    expect(sendBackLead('1')).toBe(15)
    expect(sendBackLead('2')).toBe(30)
    expect(sendBackLead('3')).toBe(45)
    expect(sendBackLead('8')).toBe(120)
    expect(sendBackLead('1-0')).toBe(120)
    expect(sendBackLead('0:20')).toBe(10)
    expect(sendBackLead('0')).toBe(120)
    expect(sendBackLead(null)).toBe(120)
    expect(sendBackLead('UNLIMITED')).toBe(120)
  })

  test.each([
    [{ time: '2' }, null, '--signal=B:TERM@30'],
    [{ time: '60' }, null, '--signal=B:TERM@120'],
    [{}, null, '--signal=B:TERM@120'],
    [{ time: '60' }, 60_000, '--signal=B:TERM@15'],
  ])('submitRun with slurm %j and --timeout %s submits %s', async (config, timeoutMs, flag) => {
    const { exec, calls } = stubSlurm({
      sbatch: { stdout: '100007\n' },
      squeue: { stdout: '100007|hs1|2026-12-03T11:00:00|PENDING|None|0|\n' },
    })
    await submitRun(exec, config, {
      runDir: tmpDir(),
      session: 's1',
      run: 1,
      branch: 'harness/s1',
      workRel: '',
      argv: ['agent'],
      env: {},
      timeoutMs,
      worktreeState: false,
      agentFiles: false,
      path: null,
    })
    const sbatch = calls.find((call) => call.tool === 'sbatch')?.args ?? []
    expect(sbatch.filter((arg) => arg.startsWith('--signal='))).toEqual([flag])
  })
})
