import { spawn } from 'node:child_process'
import { afterAll, expect, test } from 'vitest'
import { SESSION_STATUSES } from '../../src/sessions/record/schema.js'
import { cli, json, NODE_ENTRY } from '../helpers/cli.js'
import { runsWith, tmuxMissing } from '../helpers/require.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { TmuxServer } from '../helpers/tmux.js'

/**
 * SPEC §4: a record harness creates holds the supervisor's pid and start time from its very first write, so
 * harness's own records are never `unverified`. `run` (foreground headless, --detach, --tmux where tmux is
 * installed) is SIGKILLed at random instants, alone or with its whole process group (as a closed terminal
 * would); whatever each kill left, no record is ever `unverified`, and every one settles to a legal status.
 */
const KILLS = 40
const AT_ONCE = 5
const hasTmux = runsWith('tmux', 'the --tmux runs of the random kills', tmuxMissing())
const tmux = hasTmux ? new TmuxServer(tmpDir()) : null
afterAll(() => tmux?.stop())

const LEGAL = new Set<string>(SESSION_STATUSES)

interface Listed {
  id: string
  status: string
  liveness?: string
}

test(`${KILLS} runs SIGKILLed at random instants: no record is ever unverified, and every one settles`, async () => {
  const repo = tmpGitRepo()
  const env = {
    ...repo.env,
    HARNESS_AUTO_CLEANUP: 'off',
    ...(tmux ? { HARNESS_TMUX_SOCKET: tmux.socket } : {}),
  }
  const modes = [[], ['--detach'], ...(tmux ? [['--tmux']] : [])]
  const seen = new Map<string, Set<string>>()
  const look = async (): Promise<Listed[]> => {
    const list = await cli(['session', 'list', '--json'], { cwd: repo.dir, env })
    expect(list.exitCode, list.stderr).toBe(0)
    const listed = json<Listed[]>(list)
    for (const s of listed) {
      const states = seen.get(s.id) ?? new Set()
      states.add(`${s.status}${s.liveness ? `/${s.liveness}` : ''}`)
      seen.set(s.id, states)
    }
    return listed
  }
  const killOne = async (i: number) => {
    const mode = modes[i % modes.length] as string[]
    const child = spawn(
      process.execPath,
      [NODE_ENTRY, 'run', ...mode, '--no-worktree', '-a', 'exec', '--', 'sleep', '1'],
      { cwd: repo.dir, env, detached: true, stdio: 'ignore' },
    )
    const exited = new Promise((r) => child.on('exit', r))
    // On a busy 2-core machine a run takes 1-4 s to create its record and start its agent: the kills span that.
    await new Promise((r) => setTimeout(r, 200 + Math.random() * 3000))
    try {
      // Odd kills: the whole process group, as a closed terminal would; even ones: harness alone.
      process.kill(i % 2 ? -(child.pid as number) : (child.pid as number), 'SIGKILL')
    } catch {}
    await exited
  }
  for (let i = 0; i < KILLS; i += AT_ONCE) {
    await Promise.all(Array.from({ length: AT_ONCE }, (_, k) => killOne(i + k)))
    await look()
  }
  // The agents sleep a second; then every record settles, by the supervisor or by list's reconciliation.
  const deadline = Date.now() + 60_000
  let listed = await look()
  while (listed.some((s) => s.status === 'RUNNING') && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500))
    listed = await look()
  }
  // What the kills left, for the record of a run (how many records, through which states).
  const paths = new Map<string, number>()
  for (const states of seen.values()) {
    const key = [...states].join(' > ')
    paths.set(key, (paths.get(key) ?? 0) + 1)
  }
  console.info(`${KILLS} kills, ${listed.length} records:`, Object.fromEntries(paths))
  const unverified = [...seen].filter(([, states]) => [...states].some((s) => s.endsWith('/unverified')))
  expect(unverified, JSON.stringify(unverified)).toEqual([])
  expect(listed.filter((s) => s.status === 'RUNNING' || !LEGAL.has(s.status))).toEqual([])
  expect(listed.length).toBeGreaterThan(0)
}, 180_000)
