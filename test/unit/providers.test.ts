import { describe, expect, test } from 'vitest'
import { ExitCode, UsageError } from '../../src/errors.js'
import {
  type AgentInvocationInput,
  buildAgentInvocation,
  listProviders,
  newAgentSessionId,
  type ProvidersConfig,
  resolveProvider,
  takesAgentSessionId,
} from '../../src/providers/args.js'
import { BUILTIN_PROVIDER_NAMES } from '../../src/providers/builtin.js'
import { findCapturedSessionId } from '../../src/providers/capture.js'
import { mergeProviderSpecs } from '../../src/providers/merge.js'

const UUID = '0b6f7c3e-5d2a-4f7e-9c1b-2a3d4e5f6a7b'

type Case = Omit<AgentInvocationInput, 'provider'>

/** The full argv, command first, as the agent would see it. */
function argv(name: string, input: Case, config?: ProvidersConfig): string[] {
  const { command, args } = buildAgentInvocation({ provider: resolveProvider(name, config), ...input })
  return [command, ...args]
}

function usageError(fn: () => unknown): UsageError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    expect((error as UsageError).exitCode).toBe(ExitCode.Usage)
    return error as UsageError
  }
  throw new Error('expected a UsageError')
}

/** [description, input, expected argv] per provider. */
const CASES: Record<string, [string, Case, string[]][]> = {
  claude: [
    [
      'headless start',
      { mode: 'headless', kind: 'start', prompt: 'fix it', agentSessionId: UUID },
      ['claude', '-p', '--session-id', UUID, 'fix it'],
    ],
    [
      'interactive start',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', agentSessionId: UUID },
      ['claude', '--session-id', UUID, 'fix it'],
    ],
    [
      'interactive start without a prompt',
      { mode: 'interactive', kind: 'start', agentSessionId: UUID },
      ['claude', '--session-id', UUID],
    ],
    [
      'headless start, readonly, model',
      {
        mode: 'headless',
        kind: 'start',
        prompt: 'fix it',
        agentSessionId: UUID,
        permission: 'readonly',
        model: 'opus',
      },
      ['claude', '-p', '--permission-mode', 'plan', '--model', 'opus', '--session-id', UUID, 'fix it'],
    ],
    [
      'interactive start, supervised adds nothing',
      {
        mode: 'interactive',
        kind: 'start',
        prompt: 'fix it',
        agentSessionId: UUID,
        permission: 'supervised',
      },
      ['claude', '--session-id', UUID, 'fix it'],
    ],
    [
      'interactive start, autonomous',
      {
        mode: 'interactive',
        kind: 'start',
        prompt: 'fix it',
        agentSessionId: UUID,
        permission: 'autonomous',
      },
      ['claude', '--dangerously-skip-permissions', '--session-id', UUID, 'fix it'],
    ],
    [
      'headless resume by id without a prompt',
      { mode: 'headless', kind: 'resume', agentSessionId: UUID },
      ['claude', '-p', '--resume', UUID, 'continue'],
    ],
    [
      'headless resume by id with a prompt and a model',
      { mode: 'headless', kind: 'resume', agentSessionId: UUID, prompt: 'add tests', model: 'sonnet' },
      ['claude', '-p', '--model', 'sonnet', '--resume', UUID, 'add tests'],
    ],
    [
      'interactive resume by id',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID },
      ['claude', '--resume', UUID],
    ],
    [
      'headless resume without an id',
      { mode: 'headless', kind: 'resume' },
      ['claude', '-p', '--continue', 'continue'],
    ],
    ['interactive resume without an id', { mode: 'interactive', kind: 'resume' }, ['claude', '--continue']],
    [
      'prompt starting with "-"',
      { mode: 'headless', kind: 'start', prompt: '-v is broken', agentSessionId: UUID },
      ['claude', '-p', '--session-id', UUID, '--', '-v is broken'],
    ],
    [
      'extra args after the prompt',
      {
        mode: 'interactive',
        kind: 'start',
        prompt: 'fix it',
        agentSessionId: UUID,
        extraArgs: ['--verbose'],
      },
      ['claude', '--session-id', UUID, 'fix it', '--verbose'],
    ],
    [
      'extra args before a guarded prompt',
      {
        mode: 'interactive',
        kind: 'start',
        prompt: '--help me',
        agentSessionId: UUID,
        extraArgs: ['--add-dir', '../lib'],
      },
      ['claude', '--session-id', UUID, '--add-dir', '../lib', '--', '--help me'],
    ],
  ],
  gemini: [
    [
      'headless start',
      { mode: 'headless', kind: 'start', prompt: 'fix it', agentSessionId: UUID },
      ['gemini', '--session-id', UUID, '-p', 'fix it'],
    ],
    [
      'interactive start',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', agentSessionId: UUID },
      ['gemini', '--session-id', UUID, '-i', 'fix it'],
    ],
    [
      'interactive start without a prompt',
      { mode: 'interactive', kind: 'start', agentSessionId: UUID },
      ['gemini', '--session-id', UUID],
    ],
    [
      'headless start, readonly, model',
      {
        mode: 'headless',
        kind: 'start',
        prompt: 'fix it',
        agentSessionId: UUID,
        permission: 'readonly',
        model: 'gemini-2.5-pro',
      },
      ['gemini', '--approval-mode', 'plan', '-m', 'gemini-2.5-pro', '--session-id', UUID, '-p', 'fix it'],
    ],
    [
      'interactive start, autonomous',
      {
        mode: 'interactive',
        kind: 'start',
        prompt: 'fix it',
        agentSessionId: UUID,
        permission: 'autonomous',
      },
      ['gemini', '--approval-mode', 'yolo', '--session-id', UUID, '-i', 'fix it'],
    ],
    [
      'headless resume by id without a prompt',
      { mode: 'headless', kind: 'resume', agentSessionId: UUID },
      ['gemini', '--resume', UUID, '-p', 'continue'],
    ],
    [
      'interactive resume by id with a prompt',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID, prompt: 'now the docs' },
      ['gemini', '--resume', UUID, '-i', 'now the docs'],
    ],
    [
      'headless resume without an id',
      { mode: 'headless', kind: 'resume' },
      ['gemini', '--resume', 'latest', '-p', 'continue'],
    ],
    [
      'interactive resume without an id',
      { mode: 'interactive', kind: 'resume' },
      ['gemini', '--resume', 'latest'],
    ],
    [
      'prompt starting with "-" is joined to its flag',
      { mode: 'headless', kind: 'start', prompt: '-x fails', agentSessionId: UUID },
      ['gemini', '--session-id', UUID, '-p=-x fails'],
    ],
  ],
  codex: [
    [
      'headless start',
      { mode: 'headless', kind: 'start', prompt: 'fix it' },
      ['codex', 'exec', '--json', 'fix it'],
    ],
    ['interactive start', { mode: 'interactive', kind: 'start', prompt: 'fix it' }, ['codex', 'fix it']],
    [
      'headless start, readonly, model',
      { mode: 'headless', kind: 'start', prompt: 'fix it', permission: 'readonly', model: 'o3' },
      ['codex', 'exec', '--sandbox', 'read-only', '-m', 'o3', '--json', 'fix it'],
    ],
    [
      'interactive start, autonomous',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', permission: 'autonomous' },
      ['codex', '--dangerously-bypass-approvals-and-sandbox', 'fix it'],
    ],
    [
      'headless resume of the latest without a prompt',
      { mode: 'headless', kind: 'resume' },
      ['codex', 'exec', '--json', 'resume', '--last', 'continue'],
    ],
    [
      'headless resume of the latest, readonly: flags before resume',
      { mode: 'headless', kind: 'resume', prompt: 'go on', permission: 'readonly' },
      ['codex', 'exec', '--sandbox', 'read-only', '--json', 'resume', '--last', 'go on'],
    ],
    [
      'interactive resume of the latest',
      { mode: 'interactive', kind: 'resume' },
      ['codex', 'resume', '--last'],
    ],
    [
      'headless resume by captured id',
      { mode: 'headless', kind: 'resume', agentSessionId: UUID },
      ['codex', 'exec', '--json', 'resume', UUID, 'continue'],
    ],
    [
      'interactive resume by captured id',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID },
      ['codex', 'resume', UUID],
    ],
    [
      'a session id at start is not passed',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', agentSessionId: UUID },
      ['codex', 'fix it'],
    ],
    [
      'prompt starting with "-"',
      { mode: 'headless', kind: 'resume', prompt: '-n is wrong' },
      ['codex', 'exec', '--json', 'resume', '--last', '--', '-n is wrong'],
    ],
  ],
  opencode: [
    [
      'headless start',
      { mode: 'headless', kind: 'start', prompt: 'fix it' },
      ['opencode', 'run', '--format', 'json', 'fix it'],
    ],
    [
      'interactive start',
      { mode: 'interactive', kind: 'start', prompt: 'fix it' },
      ['opencode', '--prompt', 'fix it'],
    ],
    [
      'headless start, autonomous, model',
      {
        mode: 'headless',
        kind: 'start',
        prompt: 'fix it',
        permission: 'autonomous',
        model: 'anthropic/claude-sonnet-4',
      },
      ['opencode', 'run', '--auto', '-m', 'anthropic/claude-sonnet-4', '--format', 'json', 'fix it'],
    ],
    [
      'headless resume of the latest without a prompt',
      { mode: 'headless', kind: 'resume' },
      ['opencode', 'run', '--format', 'json', '--continue', 'continue'],
    ],
    ['interactive resume of the latest', { mode: 'interactive', kind: 'resume' }, ['opencode', '--continue']],
    [
      'headless resume by captured id',
      { mode: 'headless', kind: 'resume', agentSessionId: 'ses_abc' },
      ['opencode', 'run', '--format', 'json', '--session', 'ses_abc', 'continue'],
    ],
    [
      'interactive resume by captured id with a prompt',
      { mode: 'interactive', kind: 'resume', agentSessionId: 'ses_abc', prompt: 'more' },
      ['opencode', '--session', 'ses_abc', '--prompt', 'more'],
    ],
    [
      'flag prompt starting with "-"',
      { mode: 'interactive', kind: 'start', prompt: '-x' },
      ['opencode', '--prompt=-x'],
    ],
    [
      'positional prompt starting with "-"',
      { mode: 'headless', kind: 'start', prompt: '-x' },
      ['opencode', 'run', '--format', 'json', '--', '-x'],
    ],
  ],
  agy: [
    ['headless start', { mode: 'headless', kind: 'start', prompt: 'fix it' }, ['agy', '-p', 'fix it']],
    ['interactive start', { mode: 'interactive', kind: 'start', prompt: 'fix it' }, ['agy', '-i', 'fix it']],
    [
      'headless start, readonly, model',
      { mode: 'headless', kind: 'start', prompt: 'fix it', permission: 'readonly', model: 'gemini-3-pro' },
      ['agy', '--mode', 'plan', '--model', 'gemini-3-pro', '-p', 'fix it'],
    ],
    [
      'interactive start, autonomous',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', permission: 'autonomous' },
      ['agy', '--dangerously-skip-permissions', '-i', 'fix it'],
    ],
    ['headless resume', { mode: 'headless', kind: 'resume' }, ['agy', '--continue', '-p', 'continue']],
    ['interactive resume', { mode: 'interactive', kind: 'resume' }, ['agy', '--continue']],
    [
      'resume with an id it cannot use continues the latest',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID, prompt: 'more' },
      ['agy', '--continue', '-i', 'more'],
    ],
    ['prompt starting with "-"', { mode: 'interactive', kind: 'start', prompt: '-x' }, ['agy', '-i=-x']],
  ],
  'pi-agent': [
    ['headless start', { mode: 'headless', kind: 'start', prompt: 'fix it' }, ['pi', '-p', 'fix it']],
    ['interactive start', { mode: 'interactive', kind: 'start', prompt: 'fix it' }, ['pi', 'fix it']],
    [
      'headless start, autonomous, model',
      { mode: 'headless', kind: 'start', prompt: 'fix it', permission: 'autonomous', model: 'sonnet' },
      ['pi', '-p', '--dangerously-skip-permissions', '--model', 'sonnet', 'fix it'],
    ],
    ['headless resume', { mode: 'headless', kind: 'resume' }, ['pi', '-p', '--continue', 'continue']],
    [
      'interactive resume with a prompt',
      { mode: 'interactive', kind: 'resume', prompt: 'more' },
      ['pi', '--continue', 'more'],
    ],
    ['prompt starting with "-"', { mode: 'headless', kind: 'start', prompt: '-x' }, ['pi', '-p', '--', '-x']],
  ],
  aider: [
    [
      'headless start',
      { mode: 'headless', kind: 'start', prompt: 'fix it' },
      ['aider', '--message', 'fix it'],
    ],
    [
      'interactive start',
      { mode: 'interactive', kind: 'start', prompt: 'fix it' },
      ['aider', '--message', 'fix it'],
    ],
    ['interactive start without a prompt', { mode: 'interactive', kind: 'start' }, ['aider']],
    [
      'headless start, autonomous, model',
      { mode: 'headless', kind: 'start', prompt: 'fix it', permission: 'autonomous', model: 'gpt-4o' },
      ['aider', '--yes-always', '--model', 'gpt-4o', '--message', 'fix it'],
    ],
    [
      'headless resume',
      { mode: 'headless', kind: 'resume' },
      ['aider', '--restore-chat-history', '--message', 'continue'],
    ],
    ['interactive resume', { mode: 'interactive', kind: 'resume' }, ['aider', '--restore-chat-history']],
    [
      'prompt starting with "-"',
      { mode: 'headless', kind: 'start', prompt: '- list item' },
      ['aider', '--message=- list item'],
    ],
  ],
  exec: [
    [
      'headless start runs the command; the prompt is not passed',
      { mode: 'headless', kind: 'start', prompt: 'ignored', extraArgs: ['make', 'test'] },
      ['make', 'test'],
    ],
    [
      'interactive start',
      { mode: 'interactive', kind: 'start', extraArgs: ['npm', 'run', 'dev'] },
      ['npm', 'run', 'dev'],
    ],
    [
      'headless resume runs the same command',
      { mode: 'headless', kind: 'resume', extraArgs: ['make', 'test'] },
      ['make', 'test'],
    ],
    [
      'interactive resume with an id runs the same command',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID, extraArgs: ['make', 'test'] },
      ['make', 'test'],
    ],
    [
      'permission adds nothing',
      { mode: 'headless', kind: 'start', permission: 'autonomous', extraArgs: ['./run.sh', '-v'] },
      ['./run.sh', '-v'],
    ],
  ],
}

describe('built-in providers: exact argv', () => {
  test('every built-in provider is covered', () => {
    expect(Object.keys(CASES)).toEqual(BUILTIN_PROVIDER_NAMES)
  })

  for (const [name, cases] of Object.entries(CASES)) {
    describe(name, () => {
      test.each(cases)('%s', (_, input, expected) => {
        expect(argv(name, input)).toEqual(expected)
      })
    })
  }
})

describe('buildAgentInvocation rules', () => {
  test('exec without a command is a usage error', () => {
    const error = usageError(() => argv('exec', { mode: 'headless', kind: 'start', prompt: 'x' }))
    expect(error.message).toBe('exec needs a command after --')
    usageError(() => argv('exec', { mode: 'interactive', kind: 'resume', extraArgs: [] }))
  })

  test('a permission the agent does not have is a usage error naming the ones it has', () => {
    for (const name of ['opencode', 'pi-agent', 'aider']) {
      const error = usageError(() =>
        argv(name, { mode: 'headless', kind: 'start', prompt: 'x', permission: 'readonly' }),
      )
      expect(error.message).toBe(`provider "${name}" has no readonly mode`)
      expect(error.hint).toBe('its permission modes: supervised, autonomous')
    }
  })

  test('a model for a provider without a model flag is a usage error', () => {
    const error = usageError(() =>
      argv('exec', { mode: 'headless', kind: 'start', model: 'x', extraArgs: ['true'] }),
    )
    expect(error.message).toBe('provider "exec" takes no model')
  })

  test('empty prompt and model count as absent', () => {
    expect(argv('claude', { mode: 'headless', kind: 'resume', prompt: '', model: '' })).toEqual([
      'claude',
      '-p',
      '--continue',
      'continue',
    ])
  })

  test('a start without the session id it needs leaves the flag out', () => {
    expect(argv('claude', { mode: 'interactive', kind: 'start', prompt: 'x' })).toEqual(['claude', 'x'])
  })

  test('placeholders are replaced once: a prompt may contain "{model}"', () => {
    expect(argv('aider', { mode: 'headless', kind: 'start', prompt: 'use {model} {x}', model: 'm' })).toEqual(
      ['aider', '--model', 'm', '--message', 'use {model} {x}'],
    )
  })

  test('the resume prompt comes from the provider', () => {
    const config: ProvidersConfig = { providers: { claude: { resume_prompt: 'keep going' } } }
    expect(argv('claude', { mode: 'headless', kind: 'resume', agentSessionId: UUID }, config)).toEqual([
      'claude',
      '-p',
      '--resume',
      UUID,
      'keep going',
    ])
  })
})

describe('resolveProvider and configuration', () => {
  test('an override replaces the fields it names and keeps the rest', () => {
    const config: ProvidersConfig = {
      providers: { claude: { command: '/opt/claude/bin/claude', model_args: ['--model={model}'] } },
    }
    const provider = resolveProvider('claude', config)
    expect(provider.builtin).toBe(true)
    expect(argv('claude', { mode: 'headless', kind: 'start', prompt: 'x', model: 'opus' }, config)).toEqual([
      '/opt/claude/bin/claude',
      '-p',
      '--model=opus',
      'x',
    ])
  })

  test('a per-mode override keeps the other mode', () => {
    const config: ProvidersConfig = {
      providers: { codex: { prompt: { interactive: ['--ask', '{prompt}'] } } },
    }
    expect(argv('codex', { mode: 'interactive', kind: 'start', prompt: 'x' }, config)).toEqual([
      'codex',
      '--ask',
      'x',
    ])
    expect(argv('codex', { mode: 'headless', kind: 'start', prompt: 'x' }, config)).toEqual([
      'codex',
      'exec',
      '--json',
      'x',
    ])
  })

  test('a permission override keeps the other levels', () => {
    const config: ProvidersConfig = {
      providers: { 'pi-agent': { permission: { readonly: ['--tools', 'read'] } } },
    }
    expect(
      argv('pi-agent', { mode: 'headless', kind: 'start', prompt: 'x', permission: 'readonly' }, config),
    ).toEqual(['pi', '-p', '--tools', 'read', 'x'])
    expect(
      argv('pi-agent', { mode: 'headless', kind: 'start', prompt: 'x', permission: 'autonomous' }, config),
    ).toEqual(['pi', '-p', '--dangerously-skip-permissions', 'x'])
  })

  test('null clears a built-in field', () => {
    const config: ProvidersConfig = { providers: { codex: { session_id_capture: null, resume_by_id: null } } }
    expect(resolveProvider('codex', config).session_id_capture).toBeNull()
    expect(argv('codex', { mode: 'headless', kind: 'resume', agentSessionId: UUID }, config)).toEqual([
      'codex',
      'exec',
      'resume',
      '--last',
      'continue',
    ])
  })

  test('a new provider from configuration', () => {
    const config: ProvidersConfig = {
      providers: {
        goose: {
          command: 'goose',
          mode_args: { headless: ['run'] },
          prompt: { headless: ['-t', '{prompt}'], interactive: [] },
          resume: ['--resume'],
          model_args: ['--model', '{model}'],
        },
      },
    }
    const provider = resolveProvider('goose', config)
    expect(provider.builtin).toBe(false)
    expect(argv('goose', { mode: 'headless', kind: 'start', prompt: 'fix', model: 'm' }, config)).toEqual([
      'goose',
      'run',
      '--model',
      'm',
      '-t',
      'fix',
    ])
    expect(argv('goose', { mode: 'headless', kind: 'resume' }, config)).toEqual([
      'goose',
      'run',
      '--resume',
      '-t',
      'continue',
    ])
    expect(argv('goose', { mode: 'interactive', kind: 'start', prompt: 'fix' }, config)).toEqual(['goose'])
    // Only supervised unless configured.
    usageError(() => argv('goose', { mode: 'headless', kind: 'start', permission: 'autonomous' }, config))
  })

  test('a new provider takes the prompt as a positional argument by default', () => {
    const config: ProvidersConfig = { providers: { mine: { command: 'mine' } } }
    expect(argv('mine', { mode: 'interactive', kind: 'start', prompt: 'hello' }, config)).toEqual([
      'mine',
      'hello',
    ])
    expect(argv('mine', { mode: 'headless', kind: 'resume' }, config)).toEqual(['mine', 'continue'])
  })

  test('an unknown provider is a usage error listing the known ones', () => {
    const config: ProvidersConfig = { providers: { mine: { command: 'mine' } } }
    const error = usageError(() => resolveProvider('cluade', config))
    expect(error.code).toBe('UNKNOWN_PROVIDER')
    expect(error.message).toBe(
      'unknown provider "cluade"; known providers: claude, gemini, codex, opencode, agy, pi-agent, aider, exec, mine',
    )
    // Names of Object.prototype members are not providers.
    usageError(() => resolveProvider('constructor'))
    usageError(() => resolveProvider('toString', config))
  })

  test('listProviders: built-ins in order, then configured ones by name', () => {
    const config: ProvidersConfig = {
      providers: { zed: { command: 'zed' }, amp: { command: 'amp' }, claude: { command: 'c' } },
    }
    const providers = listProviders(config)
    expect(providers.map((p) => p.name)).toEqual([...BUILTIN_PROVIDER_NAMES, 'amp', 'zed'])
    expect(providers.find((p) => p.name === 'claude')?.command).toBe('c')
    expect(listProviders().map((p) => p.name)).toEqual(BUILTIN_PROVIDER_NAMES)
  })

  test('mergeProviderSpecs: lists replace, per-mode fields merge per mode, null clears', () => {
    expect(
      mergeProviderSpecs(
        { command: 'a', prompt: ['{prompt}'], start_args: ['--x'], permission: { autonomous: ['--y'] } },
        { prompt: { headless: ['-p', '{prompt}'] }, start_args: ['--z'], permission: { readonly: [] } },
      ),
    ).toEqual({
      command: 'a',
      prompt: { headless: ['-p', '{prompt}'], interactive: ['{prompt}'] },
      start_args: ['--z'],
      permission: { autonomous: ['--y'], readonly: [] },
    })
    expect(mergeProviderSpecs({ model_args: ['-m', '{model}'] }, { model_args: null })).toEqual({
      model_args: null,
    })
  })
})

describe('agent session ids', () => {
  test('generated only for providers that take one at start', () => {
    const id = newAgentSessionId(resolveProvider('claude'))
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(newAgentSessionId(resolveProvider('claude'))).not.toBe(id)
    expect(newAgentSessionId(resolveProvider('gemini'))).toMatch(/^[0-9a-f-]{36}$/)
    for (const name of ['codex', 'opencode', 'agy', 'pi-agent', 'aider', 'exec']) {
      expect(newAgentSessionId(resolveProvider(name))).toBeUndefined()
    }
    const config: ProvidersConfig = {
      providers: { mine: { command: 'mine', start_args: ['--id={session_id}'] } },
    }
    expect(takesAgentSessionId(resolveProvider('mine', config))).toBe(true)
  })

  test('captured from codex JSONL output', () => {
    const output = [
      'Reading prompt from stdin...',
      '{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}',
      '{"type":"turn.started"}',
    ].join('\n')
    expect(findCapturedSessionId(resolveProvider('codex'), output)).toBe(
      '0199a213-81c0-7800-8aa1-bbab2a035a53',
    )
  })

  test('captured from opencode JSON events, nested or not', () => {
    const provider = resolveProvider('opencode')
    expect(findCapturedSessionId(provider, '{"type":"step_start","part":{"sessionID":"ses_1"}}\n')).toBe(
      'ses_1',
    )
    expect(findCapturedSessionId(provider, 'noise\n{"sessionID":""}\n{broken\n{"sessionID":"ses_2"}')).toBe(
      'ses_2',
    )
    expect(findCapturedSessionId(provider, 'no json here')).toBeUndefined()
    expect(findCapturedSessionId(resolveProvider('claude'), '{"thread_id":"x"}')).toBeUndefined()
  })
})
