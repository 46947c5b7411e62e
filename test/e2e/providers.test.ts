import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { writeProjectConfig } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

type Rec = Record<string, unknown> & { id: string; status: string; agent_session_id?: string }

const UUID = '<uuid>'
const PI = '<agent_dir>/pi.jsonl'
const AIDER = '<agent_dir>/aider.chat.md'
const STREAM = ['--output-format', 'stream-json', '--verbose']
/** gemini's headless event stream: its `result` event carries the run's usage. */
const GEMINI_JSON = ['--output-format', 'stream-json']
const CAPTURED = { codex: 'thread-7f3a', opencode: 'ses_42' } as const

/**
 * Headless argv (no terminal: these tests run the CLI with piped stdio), start then resume without a prompt,
 * with -P and -m. Written out by hand from docs/providers.md, independent of the implementation.
 */
const HEADLESS: Record<string, { permission: string; start: string[]; resume: string[] }> = {
  claude: {
    permission: 'readonly',
    start: ['-p', ...STREAM, '--permission-mode', 'plan', '--model', 'm1', '--session-id', UUID, 'the task'],
    resume: ['-p', ...STREAM, '--permission-mode', 'plan', '--model', 'm1', '--resume', UUID, 'continue'],
  },
  gemini: {
    permission: 'readonly',
    start: [
      ...GEMINI_JSON,
      '--approval-mode',
      'plan',
      '--skip-trust',
      '-m',
      'm1',
      '--session-id',
      UUID,
      '-p',
      'the task',
    ],
    resume: [
      ...GEMINI_JSON,
      '--approval-mode',
      'plan',
      '--skip-trust',
      '-m',
      'm1',
      '--resume',
      UUID,
      '-p',
      'continue',
    ],
  },
  codex: {
    permission: 'readonly',
    start: ['exec', '--sandbox', 'read-only', '-m', 'm1', '--json', 'the task'],
    resume: ['exec', '--sandbox', 'read-only', '-m', 'm1', '--json', 'resume', CAPTURED.codex, 'continue'],
  },
  opencode: {
    permission: 'autonomous',
    start: ['run', '--auto', '-m', 'm1', '--format', 'json', 'the task'],
    resume: ['run', '--auto', '-m', 'm1', '--format', 'json', '--session', CAPTURED.opencode, 'continue'],
  },
  agy: {
    permission: 'readonly',
    start: ['--mode', 'plan', '--model', 'm1', '-p', 'the task'],
    resume: ['--mode', 'plan', '--model', 'm1', '--continue', '-p', 'continue'],
  },
  'pi-agent': {
    permission: 'readonly',
    start: [
      '-p',
      '--mode',
      'json',
      '--tools',
      'read,grep,find,ls',
      '--model',
      'm1',
      '--session',
      PI,
      'the task',
    ],
    resume: [
      '-p',
      '--mode',
      'json',
      '--tools',
      'read,grep,find,ls',
      '--model',
      'm1',
      '--session',
      PI,
      'continue',
    ],
  },
  aider: {
    permission: 'autonomous',
    start: ['--yes-always', '--model', 'm1', '--chat-history-file', AIDER, '--message', 'the task'],
    resume: [
      '--yes-always',
      '--model',
      'm1',
      '--chat-history-file',
      AIDER,
      '--restore-chat-history',
      '--message',
      'continue',
    ],
  },
}

const BINARY: Record<string, string> = { 'pi-agent': 'pi' }

describe('exact agent argv, headless', () => {
  for (const [provider, expected] of Object.entries(HEADLESS)) {
    test(`${provider}: start and resume`, async () => {
      const repo = tmpGitRepo()
      const output =
        provider === 'codex'
          ? `{"type":"thread.started","thread_id":"${CAPTURED.codex}"}`
          : provider === 'opencode'
            ? `{"type":"step_start","part":{"sessionID":"${CAPTURED.opencode}"}}`
            : 'plain output'
      const agents = fakeAgents(repo.home, repo.env, { output })
      const args = ['run', '-a', provider, '-P', expected.permission, '-m', 'm1', '--json', 'the task']
      const run = await cli(args, { cwd: repo.dir, env: agents.env })
      expect(run.exitCode, run.stderr).toBe(0)
      const record = json<Rec>(run)
      const resume = await cli(['session', 'resume', record.id, '--json'], { cwd: repo.dir, env: agents.env })
      expect(resume.exitCode, resume.stderr).toBe(0)
      const resumed = json<Rec>(resume)
      const uuid = record.agent_session_id ?? ''
      const agentDir = join(repo.dir, '.harness', 'agents', record.id)
      const fill = (argv: string[]) =>
        argv.map((a) => (a === UUID ? uuid : a.replace('<agent_dir>', agentDir)))
      const [start, again] = agents.starts()
      expect(start?.name).toBe(BINARY[provider] ?? provider)
      expect(start?.args).toEqual(fill(expected.start))
      expect(again?.args).toEqual(fill(expected.resume))
      expect(again?.cwd).toBe(record.worktree_dir)
      if (provider in CAPTURED)
        expect(resumed.agent_session_id).toBe(CAPTURED[provider as keyof typeof CAPTURED])
      if (provider === 'claude' || provider === 'gemini') expect(uuid).toMatch(/^[0-9a-f-]{36}$/)
    })
  }

  test('a resume prompt replaces "continue"; a prompt starting with "-" never becomes a flag', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const record = json<Rec>(
      await cli(['run', '-a', 'claude', '--json', '--prompt=-v crashes'], { cwd: repo.dir, env: agents.env }),
    )
    await cli(['session', 'resume', record.id, 'now', 'the', 'tests'], { cwd: repo.dir, env: agents.env })
    const [start, again] = agents.starts()
    const supervised = ['--permission-mode', 'acceptEdits']
    expect(start?.args).toEqual([
      '-p',
      ...STREAM,
      ...supervised,
      '--session-id',
      record.agent_session_id,
      '--',
      '-v crashes',
    ])
    expect(again?.args).toEqual([
      '-p',
      ...STREAM,
      ...supervised,
      '--resume',
      record.agent_session_id,
      'now the tests',
    ])
  })

  test('pi gets a prompt starting with "-" as a message: it has no `--`, so the prompt gets a space', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const run = await cli(['run', '-a', 'pi-agent', '--json', '--prompt=-v crashes'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const [start] = agents.starts()
    expect(start?.args).not.toContain('--')
    expect(start?.args?.at(-1)).toBe(' -v crashes')
  })

  test('opencode without its session id: resume is refused (exit 4, a hint), never --continue', async () => {
    const repo = tmpGitRepo()
    // The fake opencode prints no sessionID: harness never learnt this session's conversation.
    const agents = fakeAgents(repo.home, repo.env)
    const record = json<Rec>(
      await cli(['run', '-a', 'opencode', '--json', 'task'], { cwd: repo.dir, env: agents.env }),
    )
    expect(record.agent_session_id ?? null).toBeNull()
    const resume = await cli(['session', 'resume', record.id, 'more'], { cwd: repo.dir, env: agents.env })
    expect(resume.exitCode).toBe(4)
    expect(resume.stderr).toMatch(/^harness: cannot resume this opencode session exactly/)
    expect(resume.stderr).toContain('opencode session list')
    expect(agents.starts()).toHaveLength(1)
    const after = json<Rec>(
      await cli(['session', 'show', record.id, '--json'], { cwd: repo.dir, env: repo.env }),
    )
    expect(after.runs).toHaveLength(1)
    expect(after.status).toBe('COMPLETED')
  })

  test('extra args after -- reach the agent, also on resume', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const record = json<Rec>(
      await cli(['run', '-a', 'aider', '--json', 'task', '--', '--no-git', '--file=a b.ts'], {
        cwd: repo.dir,
        env: agents.env,
      }),
    )
    await cli(['session', 'resume', record.id], { cwd: repo.dir, env: agents.env })
    const [start, again] = agents.starts()
    const history = join(repo.dir, '.harness', 'agents', record.id, 'aider.chat.md')
    expect(start?.args).toEqual([
      '--chat-history-file',
      history,
      '--message',
      'task',
      '--no-git',
      '--file=a b.ts',
    ])
    expect(again?.args).toEqual([
      '--chat-history-file',
      history,
      '--restore-chat-history',
      '--message',
      'continue',
      '--no-git',
      '--file=a b.ts',
    ])
  })

  test('unsupported permission and unknown agent are usage errors; nothing is created', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const readonly = await cli(['run', '-a', 'aider', '-P', 'readonly', 'x'], {
      cwd: repo.dir,
      env: agents.env,
    })
    expect(readonly.exitCode).toBe(2)
    expect(readonly.stderr).toContain(
      'provider "aider" has no readonly level; it has: supervised, autonomous',
    )
    const unknown = await cli(['run', '-a', 'nope', 'x'], { cwd: repo.dir, env: agents.env })
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('unknown provider "nope"')
    const badLevel = await cli(['run', '-a', 'claude', '-P', 'yolo', 'x'], { cwd: repo.dir, env: agents.env })
    expect(badLevel.exitCode).toBe(2)
    expect(agents.starts()).toHaveLength(0)
    expect(repo.git('branch', '--list', 'harness/*')).toBe('')
  })
})

describe('providers from config', () => {
  test('config can override a built-in and add a provider; defaults apply', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const harnessDir = join(repo.dir, '.harness')
    const { mkdirSync } = await import('node:fs')
    mkdirSync(harnessDir)
    writeProjectConfig(
      repo.dir,
      repo.env,
      JSON.stringify({
        defaults: { agent: 'mybot', permission: 'autonomous' },
        providers: {
          mybot: {
            command: join(agents.binDir, 'claude'),
            prompt: ['--task', '{prompt}'],
            permission: { autonomous: ['--yolo'] },
            resume: ['--again'],
          },
          codex: { command: join(agents.binDir, 'aider') },
        },
      }),
    )
    const record = json<Rec>(await cli(['run', '--json', 'hello'], { cwd: repo.dir, env: agents.env }))
    expect(record.provider).toBe('mybot')
    await cli(['run', '-a', 'codex', '-P', 'supervised', 'x'], { cwd: repo.dir, env: agents.env })
    const [mine, codex] = agents.starts()
    expect(mine?.args).toEqual(['--yolo', '--task', 'hello'])
    expect(codex).toMatchObject({
      name: 'aider',
      args: ['exec', '--sandbox', 'workspace-write', '--json', 'x'],
    })
  })

  test('an invalid config names the file and the key; exit 2', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(repo.home, repo.env)
    const { mkdirSync } = await import('node:fs')
    mkdirSync(join(repo.dir, '.harness'))
    const file = join(repo.dir, '.harness', 'config.json')
    writeProjectConfig(repo.dir, repo.env, { providers: { claude: { command: 42 } } })
    const run = await cli(['run', '-a', 'claude', 'x'], { cwd: repo.dir, env: agents.env })
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain(file)
    expect(run.stderr).toContain('providers.claude.command')
    const userFile = join(repo.home, '.config', 'harness', 'config.json')
    mkdirSync(join(repo.home, '.config', 'harness'), { recursive: true })
    writeFileSync(userFile, '{ not json')
    writeProjectConfig(repo.dir, repo.env, '{}')
    const user = await cli(['run', '-a', 'claude', 'x'], { cwd: repo.dir, env: agents.env })
    expect(user.exitCode).toBe(2)
    expect(user.stderr).toContain(userFile)
  })
})
