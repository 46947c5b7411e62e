import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents, isAlive } from '../helpers/agents.js'
import { cli, HARNESS_BIN } from '../helpers/cli.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, tmuxServer, waitFor } from '../helpers/tmux.js'

type Rec = Record<string, unknown> & { id: string; status: string; runs: Rec[] }

const tmux = tmuxServer()

const H = shellQuote(HARNESS_BIN)

const records = (dir: string) => readRecords<Rec>(dir)

describe('interactive runs in a real terminal', () => {
  test('Ctrl-C reaches the agent exactly once; the outcome is recorded; the signal stops the calling loop', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { onSigint: true, sleepMs: 60_000 })
    const out = join(repo.home, 'loop.out')
    // A shell loop that would run the agent three times if harness swallowed the Ctrl-C.
    const script = `cd ${shellQuote(repo.dir)}
for i in 1 2 3; do ${H} run -a claude "task $i"; echo "iteration $i exit $?" >> ${shellQuote(out)}; done
echo loop-finished >> ${shellQuote(out)}`
    await tmux.start('ctrlc', script, agents.env)
    const started = await waitFor('the agent to start', () => agents.starts()[0])
    expect(started.stdin_tty).toBe(true)
    tmux.sendKeys('ctrlc', 'C-c')
    const [record] = await waitFor('the outcome', () => {
      const found = records(repo.dir)
      return found[0]?.status !== 'RUNNING' && found.length ? found : undefined
    })
    // harness (the agent's parent) exits just after recording: once it is gone, the loop has had its chance.
    await waitFor('harness to exit', () => !isAlive(started.ppid as number))
    // A loop that went on would start the agent again and keep its pane: the pane goes only if it stopped.
    await waitFor('the loop to end', () => !tmux.hasSession('ctrlc'))
    expect(agents.entries().filter((e) => e.event === 'sigint')).toHaveLength(1)
    // An interrupt, not a failure: PAUSED, resumable, the exit code 130 kept (SPEC §4).
    expect(record).toMatchObject({ status: 'PAUSED', exit_code: 130, stop_reason: 'interrupt' })
    expect(record?.runs[0]).toMatchObject({ signal: 'SIGINT', exit_code: null })
    expect(agents.starts()).toHaveLength(1)
    expect(existsSync(out) ? readFileSync(out, 'utf8') : '').toBe('')
    expect(isAlive(started.pid)).toBe(false)
  })

  test('closing the terminal records PAUSED (not a hung RUNNING) and the agent is gone', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { ignoreHup: true, sleepMs: 60_000 })
    await tmux.start('hangup', `cd ${shellQuote(repo.dir)}\n${H} run -a codex "long task"`, agents.env)
    const started = await waitFor('the agent to start', () => agents.starts()[0])
    tmux.killSession('hangup')
    const [record] = await waitFor('PAUSED', () => {
      const found = records(repo.dir)
      return found[0]?.status === 'PAUSED' ? found : undefined
    })
    expect(record).toMatchObject({ status: 'PAUSED', stop_reason: 'hangup', exit_code: 129 })
    await waitFor('the agent to be gone', () => !isAlive(started.pid))
    // harness (the agent's parent) exits just after recording: wait for it rather than race it.
    await waitFor('harness to exit', () => !isAlive(started.ppid as number))
  })

  test('an agent that sees the closed terminal first (harness gets no SIGHUP at all) is still PAUSED "hangup"', async () => {
    const repo = tmpGitRepo()
    // Raw mode; it exits 1 as soon as its terminal hangs up, and ignores SIGHUP.
    const agents = fakeAgents(repo.home, repo.env, { raw: true, ignoreHup: true, sleepMs: 60_000 })
    const out = join(repo.home, 'hangup.out')
    // The shell, the session leader, ignores the hang-up and outlives harness: so nothing signals harness, the
    // agent's end of input is all there is (how a terminal closing often looks to a child of a shell).
    const script = `trap '' HUP
cd ${shellQuote(repo.dir)}
${H} run -a claude task; echo "exit $?" > ${shellQuote(out)}`
    await tmux.start('first', script, agents.env)
    await waitFor('the agent to hold the terminal', () => agents.entries().some((e) => e.event === 'raw'))
    tmux.killSession('first')
    await waitFor('harness to exit', () => existsSync(out))
    expect(agents.entries().find((e) => e.event === 'hung-up')).toBeTruthy()
    expect(readFileSync(out, 'utf8')).toBe('exit 129\n')
    expect(records(repo.dir)[0]).toMatchObject({ status: 'PAUSED', stop_reason: 'hangup', exit_code: 129 })
  })

  test('raw mode: Ctrl-C as a byte ends the agent with 130: PAUSED "interrupt"; quitting with 0 is COMPLETED; wait agrees', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env, { raw: true, sleepMs: 60_000 })
    const out = join(repo.home, 'raw.out')
    const script = `cd ${shellQuote(repo.dir)}
${H} run -a claude --session-id raw-int task; echo "interrupted $?" >> ${shellQuote(out)}
${H} run -a claude --session-id raw-quit task; echo "quit $?" >> ${shellQuote(out)}
sleep 60`
    await tmux.start('raw', script, agents.env)
    await waitFor('the first agent to hold the terminal', () =>
      agents.entries().some((e) => e.event === 'raw'),
    )
    tmux.sendKeys('raw', 'C-c')
    await waitFor('the second agent', () => agents.entries().filter((e) => e.event === 'raw').length === 2)
    tmux.sendKeys('raw', 'q')
    await waitFor('both runs', () => existsSync(out) && readFileSync(out, 'utf8').includes('quit'))
    tmux.killSession('raw')
    expect(readFileSync(out, 'utf8')).toBe('interrupted 130\nquit 0\n')
    const byId = Object.fromEntries(records(repo.dir).map((r) => [r.id, r]))
    expect(byId['raw-int']).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupt', exit_code: 130 })
    expect(byId['raw-quit']).toMatchObject({ status: 'COMPLETED', stop_reason: 'exited', exit_code: 0 })
    const wait = await cli(['session', 'wait', 'raw-int'], { cwd: repo.dir, env: agents.env })
    expect(wait.exitCode).toBe(130)
  })

  // Every provider's interactive argv is written out in test/unit/providers/args.test.ts; this shows that a
  // terminal selects it end to end, for each kind of resume: by the id harness chose (claude), by the agent's
  // own "last" (codex) and by a per-session file (pi).
  test('a terminal gets the interactive argv, start and resume', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const done = join(repo.home, 'done')
    const providers = ['claude', 'codex', 'pi-agent']
    const permission: Record<string, string> = {
      claude: 'autonomous',
      codex: 'readonly',
      'pi-agent': 'autonomous',
    }
    const lines = providers.map(
      (p) =>
        `id=$(${H} run -a ${p} -P ${permission[p]} -m m1 --session-id s-${p} task </dev/tty >/dev/tty 2>&1; echo s-${p}); ${H} session resume "$id"`,
    )
    await tmux.start(
      'argv',
      `cd ${shellQuote(repo.dir)}\n${lines.join('\n')}\ntouch ${shellQuote(done)}\nsleep 60`,
      // claude refuses autonomous as root unless in a sandbox (harness says so first): this is one.
      { ...agents.env, IS_SANDBOX: '1' },
    )
    // Six runs one after another: a generous ceiling for all of them on a busy machine.
    await waitFor('all runs', () => existsSync(done), 300_000)
    tmux.killSession('argv')
    const starts = agents.starts()
    expect(starts).toHaveLength(providers.length * 2)
    for (const start of starts) expect(start.stdin_tty).toBe(true)
    const uuid = (p: string) => records(repo.dir).find((r) => r.id === `s-${p}`)?.agent_session_id as string
    const agentFile = (p: string, file: string) => join(repo.dir, '.harness', 'agents', `s-${p}`, file)
    const expected: Record<string, [string[], string[]]> = {
      claude: [
        ['--dangerously-skip-permissions', '--model', 'm1', '--session-id', uuid('claude'), 'task'],
        ['--dangerously-skip-permissions', '--model', 'm1', '--resume', uuid('claude')],
      ],
      codex: [
        ['--sandbox', 'read-only', '-m', 'm1', 'task'],
        ['--sandbox', 'read-only', '-m', 'm1', 'resume', '--last', '--include-non-interactive'],
      ],
      'pi-agent': [
        ['--model', 'm1', '--session', agentFile('pi-agent', 'pi.jsonl'), 'task'],
        ['--model', 'm1', '--session', agentFile('pi-agent', 'pi.jsonl')],
      ],
    }
    providers.forEach((p, i) => {
      expect(starts[2 * i]?.args, `${p} start`).toEqual(expected[p]?.[0])
      expect(starts[2 * i + 1]?.args, `${p} resume`).toEqual(expected[p]?.[1])
    })
    for (const record of records(repo.dir)) expect(record.status, record.id).toBe('COMPLETED')
  }, 360_000)
})
