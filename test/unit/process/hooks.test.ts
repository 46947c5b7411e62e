import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { runHook } from '../../../src/process/hooks.js'
import { isAlive } from '../../helpers/agents.js'
import { tmpDir } from '../../helpers/tmp.js'
import { waitFor } from '../../helpers/tmux.js'

/** A hook that records its pid and that of a child in its group, then never ends. */
function hangingHook(dir: string): { argv: string[]; pids: () => number[] } {
  const file = join(dir, 'pids')
  const script = `sleep 600 & echo $! >> '${file}'; echo $$ >> '${file}'; wait`
  return {
    argv: ['sh', '-c', script],
    pids: () => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map(Number) : []),
  }
}

// hooks.on_status commands run under a deadline (docs/security.md, "Deadlines"): past it the hook and its
// process group are killed and the log says so; a short-lived command stops waiting sooner.
describe('runHook', () => {
  test('a hook past its deadline is killed with its process group, and the log says so', {
    tags: ['process'],
  }, async () => {
    const dir = tmpDir()
    const log = join(dir, 'session.log')
    const hook = hangingHook(dir)
    await runHook(hook.argv, {}, log, process.env, { patienceMs: 60_000, deadlineMs: 500 })
    await waitFor('both pids', () => hook.pids().length === 2)
    await waitFor('the hook and its child to be gone', () => hook.pids().every((pid) => !isAlive(pid)))
    expect(readFileSync(log, 'utf8')).toContain(
      '[harness] hooks.on_status (sh) killed after 0.5 s (its deadline)',
    )
  })

  test('a short-lived command stops waiting at its patience; the deadline still holds while it runs', {
    tags: ['process'],
  }, async () => {
    const dir = tmpDir()
    const log = join(dir, 'session.log')
    const hook = hangingHook(dir)
    await runHook(hook.argv, {}, log, process.env, { patienceMs: 200, deadlineMs: 1000 })
    // Returned before the deadline: the hook may still run (or even not have logged yet).
    await waitFor('the hook to be killed at its deadline', () => {
      const pids = hook.pids()
      return pids.length === 2 && pids.every((pid) => !isAlive(pid))
    })
  })

  test('a hook that ends in time is waited for; a failing one is noted, never thrown', {
    tags: ['process'],
  }, async () => {
    const dir = tmpDir()
    const log = join(dir, 'session.log')
    await runHook(['sh', '-c', 'exit 3'], {}, log, process.env, { patienceMs: 60_000, deadlineMs: 60_000 })
    expect(readFileSync(log, 'utf8')).toContain('[harness] hooks.on_status (sh) exited with 3')
    await runHook(['/nonexistent/hook'], {}, log, process.env, { patienceMs: 60_000, deadlineMs: 60_000 })
    expect(readFileSync(log, 'utf8')).toContain(
      '[harness] hooks.on_status (/nonexistent/hook) could not start',
    )
  })
})
