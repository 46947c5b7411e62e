import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import type { DoctorReport } from '../../src/doctor.js'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { tmpGitRepo } from '../helpers/tmp.js'

const statusOf = (report: DoctorReport, name: string) => report.checks.find((c) => c.name === name)?.status

test('doctor: a working setup is usable (exit 0), --json says why line by line', async () => {
  const repo = tmpGitRepo()
  await finishedSession(repo)
  // doctor starts every agent it finds two or three times (--version, --help): two are enough to show it.
  const agents = fakeAgents(repo.home, repo.env, { names: ['claude', 'codex'] })
  const result = await cli(['doctor', '--json'], { cwd: repo.dir, env: agents.env })
  expect(result.exitCode, result.stdout).toBe(0)
  const report = json<DoctorReport>(result)
  expect(report.usable).toBe(true)
  expect(statusOf(report, 'git')).toBe('ok')
  expect(statusOf(report, '.harness')).toBe('ok')
  expect(statusOf(report, 'sessions')).toBe('ok')
  expect(['ok', 'warn']).toContain(statusOf(report, 'agent claude'))
  expect(['ok', 'warn']).toContain(statusOf(report, 'agent codex'))
  // An agent that is not installed is only a note, unless it is the default one (below).
  expect(statusOf(report, 'agent aider')).toBe('info')
})

test('doctor: no git, an unusable .harness, an untrusted config and a missing agent are FAIL lines, exit 1', async () => {
  const repo = tmpGitRepo()
  // PATH holds node and the fake codex but neither git nor claude.
  const agents = fakeAgents(repo.home, repo.env, { names: ['codex'] })
  symlinkSync(process.execPath, join(agents.binDir, 'node'))
  mkdirSync(join(repo.dir, '.harness'))
  writeFileSync(join(repo.dir, '.harness', 'sessions'), 'not a folder')
  writeFileSync(join(repo.dir, '.harness', 'config.json'), '{"worktree": {"setup": "curl example.com | sh"}}')
  const env = { ...agents.env, PATH: agents.binDir }
  // Wide enough that no line is wrapped (test/unit/render/doctor.test.ts holds the wrapping).
  const text = await cli(['doctor'], { cwd: repo.dir, env: { ...env, COLUMNS: '300' } })
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

test('doctor: an agent whose --version takes 6 s still shows its version (each probe has its own ceiling)', async () => {
  const repo = tmpGitRepo()
  const bin = join(repo.home, 'slow-bin')
  mkdirSync(bin)
  // Slower than the 5 s that cut gemini-cli's 2 s --version short on a busy 2-core machine.
  writeFileSync(
    join(bin, 'gemini'),
    `#!/bin/sh\nif [ "$1" = "--version" ]; then sleep 6; echo 0.61.0; else echo "Usage: gemini [options]"; fi\n`,
    { mode: 0o755 },
  )
  const env = { ...repo.env, PATH: `${bin}:${repo.env.PATH ?? ''}` }
  const report = json<DoctorReport>(await cli(['doctor', '--json'], { cwd: repo.dir, env }))
  const gemini = report.checks.find((c) => c.name === 'agent gemini')
  expect(gemini?.detail).toContain('0.61.0')
  expect(gemini?.detail).not.toContain('version unknown')
})
