import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  capturePane,
  hasTmuxSession,
  killTmuxSession,
  newTmuxSession,
  TMUX_CALL_DEADLINE_MS,
} from '../../../src/process/tmux.js'
import { isAlive } from '../../helpers/agents.js'
import { tmpDir } from '../../helpers/tmp.js'
import { waitFor } from '../../helpers/tmux.js'

/** A `tmux` on PATH whose server never answers: it records its pid, then waits for ever. */
function hungTmux(): { env: NodeJS.ProcessEnv; pids: () => number[] } {
  const dir = tmpDir()
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  const pids = join(dir, 'pids')
  writeFileSync(join(bin, 'tmux'), `#!/bin/sh\necho $$ >> '${pids}'\nexec sleep 600\n`)
  chmodSync(join(bin, 'tmux'), 0o755)
  return {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    pids: () => (existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').map(Number) : []),
  }
}

// Every tmux call harness makes for itself has a deadline (docs/security.md, "Deadlines"); an attach, which
// the user holds, has none. One deadline for all the calls below: they run at once.
describe('tmux control calls under a deadline', () => {
  test('a server that never answers: each call gives up, says so, and leaves no tmux process', {
    tags: ['process'],
    timeout: 60_000 + TMUX_CALL_DEADLINE_MS,
  }, async () => {
    const tmux = hungTmux()
    const started = newTmuxSession({
      socket: 's',
      name: 'harness-x',
      cwd: '/',
      argv: ['true'],
      env: tmux.env,
    })
    const [has, screen, , failure] = await Promise.all([
      hasTmuxSession('s', 'harness-x', tmux.env),
      capturePane('s', 'harness-x', tmux.env),
      killTmuxSession('s', 'harness-x', tmux.env),
      started.then(
        () => null,
        (error: Error) => error.message,
      ),
    ])
    expect(has).toBe(false)
    expect(screen).toBeNull()
    expect(failure).toBe(
      `tmux new-session failed: tmux did not answer within ${TMUX_CALL_DEADLINE_MS / 1000} s`,
    )
    expect(tmux.pids()).toHaveLength(4)
    await waitFor('the hung tmux processes to be gone', () => tmux.pids().every((pid) => !isAlive(pid)))
  })
})
