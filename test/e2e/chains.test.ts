import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { recordIfAny } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

interface StepJson {
  n: number
  session_id: string | null
  status: string
  waits_for: string | null
}
interface ChainJson {
  name: string
  state: string
  runner: { pid: number; liveness: string } | null
  next: number | null
  steps: StepJson[]
}

describe('chains', () => {
  test('steps run in order from the previous branch; a failing step stops the chain and a re-run continues at it', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(join(repo.dir, '..'), repo.env)
    const env = agents.env
    const order = join(repo.dir, '..', 'order.log')
    const marker = join(repo.dir, '..', 'failed-once')
    const h = (...args: string[]) => cli(args, { cwd: repo.dir, env })

    expect((await h('chain', 'create', 'build')).exitCode).toBe(0)
    const step1 = `echo 1 >> '${order}'; echo one > one.txt`
    const step3 = `echo 3 >> '${order}'; test -f one.txt || exit 7; echo three > three.txt; test -e '${marker}' || { touch '${marker}'; exit 1; }`
    expect((await h('chain', 'add', 'build', '-a', 'exec', '--', 'sh', '-c', step1)).exitCode).toBe(0)
    expect((await h('chain', 'add', 'build', '-a', 'claude', 'review step one')).exitCode).toBe(0)
    const added = await h('chain', 'add', 'build', '--json', '-a', 'exec', '--', 'sh', '-c', step3)
    expect(added.exitCode, added.stderr).toBe(0)
    expect(json<ChainJson>(added).steps.map((s) => s.status)).toEqual(['PENDING', 'PENDING', 'PENDING'])

    const pending = json<ChainJson>(await h('chain', 'status', 'build', '--json'))
    expect(pending.next).toBe(1)
    expect(pending.steps[1]?.waits_for).toMatch(/step 1/)
    expect((await h('chain', 'status', 'build')).stdout).toMatch(/^\[2\] -\s+PENDING/m)

    // First run: steps 1 and 2 complete, step 3 fails and stops the chain.
    const first = await h('chain', 'run', 'build', '--json')
    expect(first.exitCode, first.stderr).toBe(1)
    const stopped = json<{ outcome: string; step: number; chain: ChainJson }>(first)
    expect(stopped.outcome).toBe('stopped')
    expect(stopped.step).toBe(3)
    expect(stopped.chain.steps.map((s) => s.status)).toEqual(['COMPLETED', 'COMPLETED', 'FAILED'])
    const [s1, s2, s3] = stopped.chain.steps.map((s) => s.session_id as string) as [string, string, string]

    // Each worktree starts from the previous step's branch; step 1's uncommitted file was carried onto it.
    const tip = (branch: string) => repo.git('rev-parse', branch)
    expect(recordIfAny(repo.dir, s2)?.base_commit).toBe(tip(`harness/${s1}`))
    expect(repo.git('show', `harness/${s1}:one.txt`)).toBe('one')
    expect(recordIfAny(repo.dir, s3)?.base_commit).toBe(tip(`harness/${s2}`))
    const claude = agents.starts().filter((e) => e.name === 'claude')
    expect(claude).toHaveLength(1)
    expect(claude[0]?.cwd).toBe(recordIfAny(repo.dir, s2)?.worktree_dir)
    // With the previous step as its context: its id in the block before the prompt.
    expect(claude[0]?.args?.join(' ')).toContain(s1)
    expect(recordIfAny(repo.dir, s2)?.context_from).toEqual([s1])

    // Run again: continues at step 3 (the same session, resumed), steps 1 and 2 are not run again.
    const second = await h('chain', 'run', 'build', '--json')
    expect(second.exitCode, second.stderr).toBe(0)
    const done = json<{ outcome: string; chain: ChainJson }>(second)
    expect(done.outcome).toBe('completed')
    expect(done.chain.steps.map((s) => [s.session_id, s.status])).toEqual([
      [s1, 'COMPLETED'],
      [s2, 'COMPLETED'],
      [s3, 'COMPLETED'],
    ])
    expect(recordIfAny(repo.dir, s3)?.runs).toHaveLength(2)
    expect(readFileSync(order, 'utf8').split('\n').filter(Boolean)).toEqual(['1', '3', '3'])
    expect(agents.starts().filter((e) => e.name === 'claude')).toHaveLength(1)
    // Marked done in the chain itself: a later cleanup of the sessions does not undo the steps.
    const stored = JSON.parse(readFileSync(join(repo.dir, '.harness', 'chains', 'build.json'), 'utf8'))
    expect(stored.steps.every((s: { completed_at?: string }) => typeof s.completed_at === 'string')).toBe(
      true,
    )

    const list = json<ChainJson[]>(await h('chain', 'list', '--json'))
    expect(list.map((c) => [c.name, c.state])).toEqual([['build', 'completed']])
  })

  test('chain kill stops the detached runner and its running step: nothing is left running', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(join(repo.dir, '..'), repo.env, { sleepMs: 120_000, children: 1 })
    const h = (...args: string[]) => cli(args, { cwd: repo.dir, env: agents.env })
    await h('chain', 'create', 'slow')
    await h('chain', 'add', 'slow', '-a', 'claude', 'first')
    await h('chain', 'add', 'slow', '-a', 'claude', 'second')

    const started = await h('chain', 'run', 'slow', '--detach', '--json')
    expect(started.exitCode, started.stderr).toBe(0)
    const runnerPid = json<{ chain: ChainJson }>(started).chain.runner?.pid as number
    expect(runnerPid).toBeGreaterThan(0)
    const again = await h('chain', 'run', 'slow')
    expect(again.exitCode).toBe(4)

    // Wait until step 1's agent and its child run.
    const sessionId = await waitFor('step 1 to get a session', () => {
      const chain = JSON.parse(readFileSync(join(repo.dir, '.harness', 'chains', 'slow.json'), 'utf8'))
      return chain.steps[0].session_id as string | undefined
    })
    await waitFor(
      'the agent and its child',
      () => agents.entries().some((e) => e.event === 'grandchild'),
      30_000,
    )
    const status = json<ChainJson>(await h('chain', 'status', 'slow', '--json'))
    expect(status.state).toBe('running')
    expect(status.runner?.liveness).toBe('running')
    expect(status.steps.map((s) => s.status)).toEqual(['RUNNING', 'PENDING'])

    const kill = await h('chain', 'kill', 'slow', '--json')
    expect(kill.exitCode, kill.stderr).toBe(0)
    expect(json<{ killed_session: string }>(kill).killed_session).toBe(sessionId)
    expect(isAlive(runnerPid)).toBe(false)
    for (const pid of agents.pids()) expect(isAlive(pid)).toBe(false)

    const after = json<ChainJson>(await h('chain', 'status', 'slow', '--json'))
    expect(after.runner).toBeNull()
    expect(after.steps.map((s) => s.status)).toEqual(['KILLED', 'PENDING'])
    expect((await h('chain', 'kill', 'slow')).exitCode).toBe(4)
    expect(existsSync(join(repo.dir, '.harness', 'chains', 'slow.json'))).toBe(true)
  })

  test('a runner killed outright leaves its step orphaned: chain run refuses, chain kill stops the agent', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(join(repo.dir, '..'), repo.env, { sleepMs: 120_000 })
    const h = (...args: string[]) => cli(args, { cwd: repo.dir, env: agents.env })
    await h('chain', 'create', 'solo')
    await h('chain', 'add', 'solo', '-a', 'claude', 'only step')
    const started = json<{ chain: ChainJson }>(await h('chain', 'run', 'solo', '--detach', '--json'))
    const runnerPid = started.chain.runner?.pid as number
    await waitFor('the agent', () => agents.starts().length > 0)
    process.kill(runnerPid, 'SIGKILL')
    await waitFor('the runner to die', () => !isAlive(runnerPid))

    const status = json<ChainJson>(await h('chain', 'status', 'solo', '--json'))
    expect(status.runner?.liveness).toBe('stale')
    expect(status.steps[0]?.status).toBe('RUNNING')
    const refused = await h('chain', 'run', 'solo')
    expect(refused.exitCode).toBe(4)
    expect(refused.stderr).toContain('still running')

    const kill = await h('chain', 'kill', 'solo')
    expect(kill.exitCode, kill.stderr).toBe(0)
    for (const pid of agents.pids()) expect(isAlive(pid)).toBe(false)
    const after = json<ChainJson>(await h('chain', 'status', 'solo', '--json'))
    expect(after.runner).toBeNull()
    expect(after.steps[0]?.status).toBe('KILLED')
  })
})
