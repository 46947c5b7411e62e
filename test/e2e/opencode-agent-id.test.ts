import { expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo } from '../helpers/tmp.js'

type Rec = Record<string, unknown> & {
  id: string
  status: string
  worktree_dir: string
  agent_session_id?: string
}

// opencode's id learnt from its own session list when its output did not say it (every interactive start):
// the fake opencode answers `session list --format json` as opencode 1.18 does (unit test: its real output).
test("opencode: an id its output never printed is learnt from its session list (this worktree's), and resume uses it", async () => {
  const repo = tmpGitRepo()
  const agents = fakeAgents(repo.home, repo.env)
  const env = { ...agents.env, FAKE_OPENCODE_SESSION: 'ses_learnt1' }
  const record = json<Rec>(await cli(['run', '-a', 'opencode', '--json', 'task'], { cwd: repo.dir, env }))
  expect(record.status).toBe('COMPLETED')
  // The list also holds a newer session of another folder of the same project: never this one's.
  expect(record.agent_session_id).toBe('ses_learnt1')
  const resume = await cli(['session', 'resume', record.id, '--json', 'more'], { cwd: repo.dir, env })
  expect(resume.exitCode, resume.stderr).toBe(0)
  const starts = agents.starts()
  expect(starts).toHaveLength(2)
  const args = starts[1]?.args ?? []
  expect(args[args.indexOf('--session') + 1]).toBe('ses_learnt1')
  expect(args).not.toContain('--continue')
})
