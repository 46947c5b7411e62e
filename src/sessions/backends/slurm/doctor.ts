import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { SlurmConfig } from '../../../config.js'
import { readText, writeFileNew } from '../../../disk/door.js'
import { HarnessError } from '../../../errors.js'
import type { DoctorLine } from '../backend.js'
import { jobActive, viewJob } from './jobs.js'
import { LOGIN_ENV } from './login-env.js'
import { makeRunDir, removeSessionSpool, type Spool } from './spool.js'
import { stopJob } from './stop.js'
import { sbatchArgs, submitJob } from './submit.js'
import { type SlurmExec, slurmText } from './tools.js'

/** One line of `harness doctor` (the shape of doctor.ts's checks). */
export type SlurmCheck = DoctorLine

const firstLine = (text: string) => text.trim().split('\n')[0] ?? ''

/**
 * What `doctor` says of Slurm (SPEC §14): `sbatch` found and its version, the controller and the cluster's
 * name, and whether `sbatch --test-only` accepts a job with the configured partition, account, time and
 * options. Each failure is a line of its own; nothing is submitted.
 */
export async function slurmChecks(exec: SlurmExec, config: SlurmConfig): Promise<SlurmCheck[]> {
  const failed = (name: string, error: unknown): SlurmCheck => ({
    name,
    status: 'fail',
    detail: error instanceof HarnessError ? error.message : String(error),
    ...(error instanceof HarnessError && error.hint ? { hint: error.hint } : {}),
  })
  let version: string
  try {
    const result = await exec('sbatch', ['--version'])
    version = firstLine(result.stdout) || firstLine(result.stderr)
  } catch (error) {
    return [failed('slurm', error)]
  }
  const checks: SlurmCheck[] = []
  try {
    const shown = await slurmText(exec, 'scontrol', ['show', 'config'], 'read the configuration')
    const cluster = /^ClusterName\s*=\s*(\S+)/m.exec(shown)?.[1]
    if (!cluster) throw new Error('scontrol show config names no ClusterName')
    checks.push({ name: 'slurm', status: 'ok', detail: `${version}, cluster ${cluster}` })
  } catch (error) {
    checks.push(failed('slurm', error))
    return checks
  }
  const args = sbatchArgs({
    script: '/dev/null',
    jobName: 'harness-doctor',
    output: '/dev/null',
    error: '/dev/null',
    chdir: '/',
    time: config.time ?? null,
    partition: config.partition,
    account: config.account,
    options: config.options ?? [],
    envNames: config.env ?? [],
    sendBackSeconds: 60,
  })
  // The same options a session's job gets, the script replaced by a command: Slurm only says where it would run.
  const test = ['--test-only', ...args.slice(0, args.indexOf('--')), '--wrap=true']
  const result = await exec('sbatch', test, { exportOnly: config.env ?? [] }).catch((error: unknown) =>
    error instanceof Error ? error : null,
  )
  if (!result || result instanceof Error) checks.push(failed('slurm test-only', result))
  else {
    const said = firstLine(result.stderr.replace(/^sbatch: /gm, ''))
    checks.push(
      result.exitCode === 0
        ? { name: 'slurm test-only', status: 'ok', detail: said }
        : { name: 'slurm test-only', status: 'fail', detail: said || `exit code ${result.exitCode}` },
    )
  }
  return checks
}

/** What `doctor --submit-test` needs: the spool, and what a session's job would get. */
export interface SubmitTestInput {
  spool: Spool
  config: SlurmConfig
  /** The agent's command (`claude`, ...), looked for on the node. */
  agentCommand: string
  /** The agent's PATH on the node; null: the job's own. */
  path: string | null
  /** The whole test's ceiling (queueing included). */
  timeoutMs: number
}

/**
 * `doctor --submit-test`: a real job, under a deadline, that reports from a node whether it sees the spool,
 * can write its scratch, and finds git, bash, tar, setsid, timeout and the agent's command. Its spool folder is
 * removed afterwards, and a job still queued or running at the deadline is cancelled.
 */
export async function submitTest(exec: SlurmExec, input: SubmitTestInput): Promise<SlurmCheck> {
  const name = 'slurm submit-test'
  if (!/^[A-Za-z0-9._+/-]{1,200}$/.test(input.agentCommand)) {
    return { name, status: 'fail', detail: `not a command name: ${JSON.stringify(input.agentCommand)}` }
  }
  const id = `doctor-${randomBytes(6).toString('hex')}`
  const runDir = makeRunDir(input.spool, id, 1)
  try {
    const script = join(runDir, 'doctor.sh')
    writeFileNew(script, doctorScript(runDir, input))
    for (const file of ['log', 'job.err']) writeFileNew(join(runDir, file), '')
    const identity = await submitJob(exec, {
      script,
      jobName: 'harness-doctor',
      output: join(runDir, 'log'),
      error: join(runDir, 'job.err'),
      chdir: input.config.scratch ?? runDir,
      time: input.config.time ?? '5',
      partition: input.config.partition,
      account: input.config.account,
      options: input.config.options ?? [],
      envNames: input.config.env ?? [],
      sendBackSeconds: 30,
    })
    const deadline = Date.now() + input.timeoutMs
    let view = await viewJob(exec, identity)
    while (jobActive(view) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      view = await viewJob(exec, identity)
    }
    if (jobActive(view)) {
      await stopJob(exec, identity, { graceMs: 0, endMs: 30_000 })
      const where = view.kind === 'queued' ? `still queued (${view.reason})` : 'still running'
      return {
        name,
        status: 'fail',
        detail: `job ${identity.job_id} ${where} after ${input.timeoutMs / 1000} s`,
      }
    }
    return reportOf(name, identity.job_id, runDir)
  } catch (error) {
    return { name, status: 'fail', detail: error instanceof HarnessError ? error.message : String(error) }
  } finally {
    removeSessionSpool(input.spool, id)
  }
}

function doctorScript(runDir: string, input: SubmitTestInput): string {
  const q = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`
  return [
    '#!/bin/bash',
    "# harness doctor --submit-test: what a session's job would find on a node.",
    'umask 077',
    `out=${q(join(runDir, 'report'))}`,
    `scratch=${q(input.config.scratch ?? '')}`,
    '[ -n "$scratch" ] || scratch=$TMPDIR',
    '[ -n "$scratch" ] || scratch=/tmp',
    LOGIN_ENV,
    'login_env',
    input.path ? `export PATH=${q(input.path)}` : '',
    '{',
    '  echo "node=$(hostname)"',
    '  echo "scratch=$scratch"',
    '  if mkdir -p -- "$scratch/harness-$(id -u)" && probe=$(mktemp -d "$scratch/harness-$(id -u)/doctor.XXXXXX"); then',
    '    echo scratch_ok=yes; rm -rf -- "$probe"',
    '  else echo scratch_ok=no; fi',
    `  for tool in git bash tar setsid timeout ${q(input.agentCommand)}; do`,
    '    command -v -- "$tool" >/dev/null && echo "found=$tool" || echo "missing=$tool"',
    '  done',
    '} >"$out.part" && mv -f -- "$out.part" "$out"',
    '',
  ].join('\n')
}

function reportOf(name: string, jobId: string, runDir: string): SlurmCheck {
  let text: string
  try {
    text = readText(join(runDir, 'report'), 'small')
  } catch {
    return {
      name,
      status: 'fail',
      detail: `job ${jobId} ended without writing to the spool: do the nodes see slurm.spool?`,
      hint: `its messages: ${join(runDir, 'job.err')}`,
    }
  }
  const values = (key: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${key}=`))
      .map((line) => line.slice(key.length + 1))
  const node = values('node')[0] ?? '?'
  const scratch = values('scratch')[0] ?? '?'
  const missing = values('missing')
  const problems = [
    ...(values('scratch_ok')[0] === 'yes' ? [] : [`cannot write scratch ${scratch}`]),
    ...(missing.length ? [`not found: ${missing.join(', ')}`] : []),
  ]
  return problems.length
    ? { name, status: 'fail', detail: `job ${jobId} on ${node}: ${problems.join('; ')}` }
    : {
        name,
        status: 'ok',
        detail: `job ${jobId} ran on ${node}: spool seen, scratch ${scratch} writable, ${values('found').join(', ')} found`,
      }
}
