import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { dryRunSession, type StartOptions } from '../../../../src/sessions/run/start.js'
import { fakeAgents } from '../../../helpers/agents.js'
import { fakeEnv, finishedRecord } from '../../../helpers/fake-env.js'
import { tmpGitRepo } from '../../../helpers/tmp.js'

const options = (more: Partial<StartOptions> = {}): StartOptions => ({
  worktree: true,
  detach: false,
  prompt: ['fix the tests'],
  extraArgs: [],
  ...more,
})

/**
 * `run --dry-run` through its port: the store and the configuration are the fakes', the repository is real (git
 * decides the base commit); what it decides is returned, and nothing is made: no worktree, branch, record or
 * `.harness` folder.
 */
function project(records = [finishedRecord('prev0001', { prompt: 'add the parser' })]) {
  const repo = tmpGitRepo()
  // The agents on PATH are fixtures: a dry run checks the agent is there, and never starts it.
  const fake = fakeEnv({ root: repo.dir, env: fakeAgents(repo.home, repo.env).env, records })
  return { repo, ...fake }
}

describe('run --dry-run, through its port', () => {
  test('decides the worktree, branch, base and argv by permission level, and makes nothing', async () => {
    const { repo, env, store } = project()
    const head = repo.git('rev-parse', 'HEAD')
    const plan = await dryRunSession(env, options({ sessionId: 'new00001', agent: 'claude' }))
    expect(plan).toMatchObject({
      dry_run: true,
      id: 'new00001',
      agent: 'claude',
      worktree: join(repo.dir, '.harness', 'worktrees', 'new00001'),
      branch: 'harness/new00001',
      base_commit: head,
      cwd: join(repo.dir, '.harness', 'worktrees', 'new00001'),
    })
    const readonly = await dryRunSession(env, options({ agent: 'codex', permission: 'readonly' }))
    const autonomous = await dryRunSession(env, options({ agent: 'codex', permission: 'autonomous' }))
    expect(readonly.permission).toBe('readonly')
    expect(autonomous.args).not.toEqual(readonly.args)
    expect(existsSync(join(repo.dir, '.harness'))).toBe(false)
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
    expect(store.writes).toEqual([])
  })

  test('the config the port gives decides the default agent and permission', async () => {
    const repo = tmpGitRepo()
    const { env } = fakeEnv({
      root: repo.dir,
      env: fakeAgents(repo.home, repo.env).env,
      config: { defaults: { agent: 'codex', permission: 'readonly' } },
    })
    const plan = await dryRunSession(env, options())
    expect(plan).toMatchObject({ agent: 'codex', permission: 'readonly' })
  })

  test("--context-from reads the earlier session from the port's store into the prompt", async () => {
    const { env } = project()
    const plan = await dryRunSession(env, options({ agent: 'claude', contextFrom: ['prev0001'] }))
    expect(plan.context_from).toEqual(['prev0001'])
    expect(plan.prompt).toContain('add the parser')
    expect(plan.prompt).toContain('fix the tests')
  })

  test('refuses an existing session id and a checkpoint to restore, before anything is read', async () => {
    const { env } = project()
    await expect(dryRunSession(env, options({ sessionId: 'prev0001' }))).rejects.toMatchObject({
      exitCode: 2,
    })
    await expect(dryRunSession(env, options({ restoreCheckpoint: '1' }))).rejects.toMatchObject({
      exitCode: 2,
    })
    await expect(dryRunSession(env, options({ worktree: false, base: 'main' }))).rejects.toMatchObject({
      exitCode: 2,
    })
  })
})
