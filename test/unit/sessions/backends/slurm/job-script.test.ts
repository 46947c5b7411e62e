import { spawnSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import type { JobPlan } from '../../../../../src/sessions/backends/slurm/job-plan.js'
import { jobScript } from '../../../../../src/sessions/backends/slurm/job-script.js'

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
