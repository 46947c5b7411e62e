import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import type { JobPlan } from '../../../../../src/sessions/backends/slurm/job-plan.js'
import { jobScript } from '../../../../../src/sessions/backends/slurm/job-script.js'
import { LOGIN_ENV } from '../../../../../src/sessions/backends/slurm/login-env.js'

const PLAN: JobPlan = {
  session: 'abc123',
  run: 2,
  runDir: '/shared/spool/harness-0/abc123/run-2',
  scratch: '/local/scratch',
  branch: 'harness/abc123',
  workRel: 'pkg/api',
  worktreeState: true,
  agentFiles: false,
  path: '/opt/agents/bin:/usr/bin:/bin',
  stepSeconds: 600,
}

describe("harness's job script", () => {
  test('is bash that parses, with the plan quoted in its header', { tags: ['process'] }, () => {
    const script = jobScript(PLAN)
    expect(script.startsWith('#!/bin/bash\n')).toBe(true)
    const syntax = spawnSync('bash', ['-n'], { input: script, encoding: 'utf8' })
    expect(syntax.stderr).toBe('')
    expect(syntax.status).toBe(0)
    expect(script).toContain("RUN_DIR='/shared/spool/harness-0/abc123/run-2'\n")
    expect(script).toContain("SCRATCH='/local/scratch'\n")
    expect(script).toContain("BRANCH='harness/abc123'\n")
    expect(script).toContain("WORK_REL='pkg/api'\n")
    expect(script).toContain('WORKTREE_STATE=1\nAGENT_FILES=0\n')
  })

  test('a quote in a path stays one word; no scratch means the job own TMPDIR', { tags: ['process'] }, () => {
    const script = jobScript({ ...PLAN, runDir: "/shared/it's here/run-2", scratch: null, path: null })
    expect(script).toContain(`RUN_DIR='/shared/it'\\''s here/run-2'\n`)
    expect(script).toContain("SCRATCH=''\n")
    expect(script).toContain("AGENT_PATH=''\n")
    const run = spawnSync('bash', ['-c', `${script.split('\nsay()')[0]}\nprintf '%s' "$RUN_DIR"`], {
      encoding: 'utf8',
    })
    expect(run.stdout).toBe("/shared/it's here/run-2")
  })

  test.each<[string, Partial<Record<keyof JobPlan, unknown>>]>([
    ['a session id that is not one', { session: '../x' }],
    ['a relative spool folder', { runDir: 'spool/run-1' }],
    ['a .. in the spool folder', { runDir: '/shared/../etc' }],
    ['a line break in a path', { scratch: '/scratch\nrm -rf ~' }],
    ['a branch with ..', { branch: 'harness/a..b' }],
    ['a branch read as a flag', { branch: '--upload-pack=x' }],
    ['an absolute working folder', { workRel: '/etc' }],
    ['a working folder out of the clone', { workRel: 'a/../../..' }],
    ['a run that is not a positive integer', { run: 1.5 }],
    ['a missing field', { stepSeconds: undefined }],
  ])('refuses a plan with %s (parsed, never cast)', (_, change) => {
    expect(() => jobScript({ ...PLAN, ...change })).toThrow()
  })

  test('refuses a plan with a field it does not know', () => {
    expect(() => jobScript({ ...PLAN, argv: ['rm', '-rf', '/'] })).toThrow()
  })
})

describe("the job's login environment (login-env.ts)", () => {
  /** LOGIN_ENV run by bash with `env` alone, `getent` failing (no login shell runs): the job's exported PATH. */
  const pathAfter = (env: Record<string, string>) => {
    const script = `set -u\n${LOGIN_ENV}\ngetent() { return 2; }\nlogin_env\ndeclare -p PATH\n`
    const result = spawnSync('/bin/bash', ['-c', script], {
      env,
      encoding: 'utf8',
      // Not a socket (node's pipes are socketpairs): bash would read ~/.bashrc, taking itself for sshd's.
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    expect(result.stderr).toBe('')
    return result.stdout.trim()
  }

  test("without a passwd entry, a job given no PATH gets su's, never bash's own (ending in .)", {
    tags: ['process'],
  }, () => {
    const path = pathAfter({ SLURM_JOB_ID: '7' })
    expect(path).toMatch(/^declare -x PATH="\/[^"]*"$/)
    expect(path.split('"')[1]?.split(':')).not.toContain('.')
  })

  test('a PATH the job was given is kept; outside a Slurm job nothing is loaded', {
    tags: ['process'],
  }, () => {
    expect(pathAfter({ SLURM_JOB_ID: '7', PATH: '/usr/bin:/bin' })).toBe('declare -x PATH="/usr/bin:/bin"')
    expect(pathAfter({})).toMatch(/^declare -- PATH=/)
  })
})
