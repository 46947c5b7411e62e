import { describe, expect, test } from 'vitest'
import { UsageError } from '../../../src/errors.js'
import {
  type AgentInvocationInput,
  buildAgentInvocation,
  listProviders,
  newAgentSessionId,
  type ProvidersConfig,
  resolveProvider,
  takesAgentSessionId,
} from '../../../src/providers/args.js'
import { BUILTIN_PROVIDER_NAMES } from '../../../src/providers/builtin.js'
import { findCapturedSessionId } from '../../../src/providers/capture.js'
import { mergeProviderSpecs } from '../../../src/providers/merge.js'
import { usageThrow } from '../../helpers/errors.js'

const UUID = '0b6f7c3e-5d2a-4f7e-9c1b-2a3d4e5f6a7b'

type Case = Omit<AgentInvocationInput, 'provider'>

/** The full argv, command first, as the agent would see it. */
function argv(name: string, input: Case, config?: ProvidersConfig): string[] {
  const { command, args } = buildAgentInvocation({ provider: resolveProvider(name, config), ...input })
  return [command, ...args]
}

const usageError = (fn: () => unknown): UsageError => usageThrow(UsageError, fn)

const AGENT_DIR = '/home/user/project/.harness/agents/3f9a12c8'

/**
 * [description, input, expected argv] per provider: the edge cases. The plain matrix of modes, levels and
 * models is in args.test.ts, with the help lines that justify each flag.
 */
const CASES: Record<string, [string, Case, string[]][]> = {
  claude: [
    [
      'interactive start without a prompt',
      { mode: 'interactive', kind: 'start', agentSessionId: UUID },
      ['claude', '--permission-mode', 'default', '--session-id', UUID],
    ],
    [
      'headless resume by id with a prompt and a model',
      { mode: 'headless', kind: 'resume', agentSessionId: UUID, prompt: 'add tests', model: 'sonnet' },
      [
        'claude',
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'acceptEdits',
        '--model',
        'sonnet',
        '--resume',
        UUID,
        'add tests',
      ],
    ],
    [
      'prompt starting with "-"',
      { mode: 'headless', kind: 'start', prompt: '-v is broken', agentSessionId: UUID },
      [
        'claude',
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'acceptEdits',
        '--session-id',
        UUID,
        '--',
        '-v is broken',
      ],
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
      ['claude', '--permission-mode', 'default', '--session-id', UUID, 'fix it', '--verbose'],
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
      [
        'claude',
        '--permission-mode',
        'default',
        '--session-id',
        UUID,
        '--add-dir',
        '../lib',
        '--',
        '--help me',
      ],
    ],
  ],
  gemini: [
    [
      'interactive start without a prompt',
      { mode: 'interactive', kind: 'start', agentSessionId: UUID },
      ['gemini', '--approval-mode', 'default', '--skip-trust', '--session-id', UUID],
    ],
    [
      'interactive resume by id with a prompt',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID, prompt: 'now the docs' },
      ['gemini', '--approval-mode', 'default', '--skip-trust', '--resume', UUID, '-i', 'now the docs'],
    ],
    [
      'prompt starting with "-" is joined to its flag',
      { mode: 'headless', kind: 'start', prompt: '-x fails', agentSessionId: UUID },
      [
        'gemini',
        '--output-format',
        'stream-json',
        '--approval-mode',
        'auto_edit',
        '--skip-trust',
        '--session-id',
        UUID,
        '-p=-x fails',
      ],
    ],
  ],
  codex: [
    [
      'headless resume of the latest, readonly, with a prompt: flags before resume',
      { mode: 'headless', kind: 'resume', prompt: 'go on', permission: 'readonly' },
      ['codex', 'exec', '--sandbox', 'read-only', '--json', 'resume', '--last', 'go on'],
    ],
    [
      'a session id at start is not passed',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', agentSessionId: UUID },
      ['codex', '--sandbox', 'workspace-write', '--ask-for-approval', 'on-request', 'fix it'],
    ],
    [
      'prompt starting with "-"',
      { mode: 'headless', kind: 'resume', prompt: '-n is wrong' },
      ['codex', 'exec', '--sandbox', 'workspace-write', '--json', 'resume', '--last', '--', '-n is wrong'],
    ],
  ],
  opencode: [
    [
      'interactive resume by captured id with a prompt',
      { mode: 'interactive', kind: 'resume', agentSessionId: 'ses_abc', prompt: 'more' },
      ['opencode', '--agent', 'build', '--session', 'ses_abc', '--prompt', 'more'],
    ],
    [
      'flag prompt starting with "-"',
      { mode: 'interactive', kind: 'start', prompt: '-x' },
      ['opencode', '--agent', 'build', '--prompt=-x'],
    ],
    [
      'positional prompt starting with "-"',
      { mode: 'headless', kind: 'start', prompt: '-x' },
      ['opencode', 'run', '--agent', 'build', '--format', 'json', '--', '-x'],
    ],
  ],
  agy: [
    [
      'resume with an id it cannot use continues the latest',
      { mode: 'interactive', kind: 'resume', agentSessionId: UUID, prompt: 'more' },
      ['agy', '--continue', '-i', 'more'],
    ],
    ['prompt starting with "-"', { mode: 'interactive', kind: 'start', prompt: '-x' }, ['agy', '-i=-x']],
  ],
  'pi-agent': [
    [
      'interactive resume with a prompt',
      { mode: 'interactive', kind: 'resume', prompt: 'more', agentDir: AGENT_DIR },
      ['pi', '--session', `${AGENT_DIR}/pi.jsonl`, 'more'],
    ],
    [
      'prompt starting with "-": pi has no `--`, so it gets a space before it',
      { mode: 'headless', kind: 'start', prompt: '-x', agentDir: AGENT_DIR },
      ['pi', '-p', '--mode', 'json', '--session', `${AGENT_DIR}/pi.jsonl`, ' -x'],
    ],
    [
      'without its folder (never from harness) the session file is left out whole',
      { mode: 'interactive', kind: 'start', prompt: 'fix it' },
      ['pi', 'fix it'],
    ],
  ],
  aider: [
    [
      'interactive start: the prompt is never passed (--message would reply once and exit)',
      { mode: 'interactive', kind: 'start', prompt: 'fix it', agentDir: AGENT_DIR },
      ['aider', '--chat-history-file', `${AGENT_DIR}/aider.chat.md`],
    ],
    [
      'interactive resume with a prompt: not passed either',
      { mode: 'interactive', kind: 'resume', prompt: 'more', agentDir: AGENT_DIR },
      ['aider', '--chat-history-file', `${AGENT_DIR}/aider.chat.md`, '--restore-chat-history'],
    ],
    [
      'prompt starting with "-"',
      { mode: 'headless', kind: 'start', prompt: '- list item', agentDir: AGENT_DIR },
      ['aider', '--chat-history-file', `${AGENT_DIR}/aider.chat.md`, '--message=- list item'],
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
    const error = usageError(() =>
      argv('aider', { mode: 'headless', kind: 'start', prompt: 'x', permission: 'readonly' }),
    )
    expect(error.message).toBe('provider "aider" has no readonly level; it has: supervised, autonomous')
    expect(error.hint).toBe('choose one with -P, e.g. -P supervised')
    const config: ProvidersConfig = { providers: { mine: { command: 'mine' } } }
    expect(
      usageError(() => argv('mine', { mode: 'headless', kind: 'start', permission: 'autonomous' }, config))
        .message,
    ).toBe('provider "mine" has no autonomous level; it has: supervised')
  })

  test('a model for a provider without a model flag is a usage error', () => {
    const error = usageError(() =>
      argv('exec', { mode: 'headless', kind: 'start', model: 'x', extraArgs: ['true'] }),
    )
    expect(error.message).toBe('provider "exec" takes no model')
  })

  test('empty prompt and model count as absent', () => {
    expect(argv('gemini', { mode: 'headless', kind: 'resume', prompt: '', model: '' })).toEqual([
      'gemini',
      '--output-format',
      'stream-json',
      '--approval-mode',
      'auto_edit',
      '--skip-trust',
      '--resume',
      'latest',
      '-p',
      'continue',
    ])
  })

  test('a start without the session id it needs leaves the flag out', () => {
    expect(argv('claude', { mode: 'interactive', kind: 'start', prompt: 'x' })).toEqual([
      'claude',
      '--permission-mode',
      'default',
      'x',
    ])
  })

  test('placeholders are replaced once: a prompt may contain "{model}"', () => {
    expect(argv('aider', { mode: 'headless', kind: 'start', prompt: 'use {model} {x}', model: 'm' })).toEqual(
      ['aider', '--model', 'm', '--message', 'use {model} {x}'],
    )
  })

  test('the resume prompt comes from the provider', () => {
    const config: ProvidersConfig = { providers: { claude: { resume_prompt: 'keep going' } } }
    expect(argv('claude', { mode: 'interactive', kind: 'resume', agentSessionId: UUID }, config)).toEqual([
      'claude',
      '--permission-mode',
      'default',
      '--resume',
      UUID,
    ])
    expect(argv('claude', { mode: 'headless', kind: 'resume', agentSessionId: UUID }, config)).toEqual([
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
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
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
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
      '--sandbox',
      'workspace-write',
      '--ask-for-approval',
      'on-request',
      '--ask',
      'x',
    ])
    expect(argv('codex', { mode: 'headless', kind: 'start', prompt: 'x' }, config)).toEqual([
      'codex',
      'exec',
      '--sandbox',
      'workspace-write',
      '--json',
      'x',
    ])
  })

  test('a permission override keeps the other levels', () => {
    const config: ProvidersConfig = {
      providers: { 'pi-agent': { permission: { autonomous: ['--tools', 'read,bash'] } } },
    }
    expect(
      argv('pi-agent', { mode: 'interactive', kind: 'start', prompt: 'x', permission: 'readonly' }, config),
    ).toEqual(['pi', '--tools', 'read,grep,find,ls', 'x'])
    expect(
      argv('pi-agent', { mode: 'interactive', kind: 'start', prompt: 'x', permission: 'autonomous' }, config),
    ).toEqual(['pi', '--tools', 'read,bash', 'x'])
  })

  test('a per-mode permission override keeps the other mode of the level', () => {
    const config: ProvidersConfig = {
      providers: { claude: { permission: { supervised: { headless: ['--permission-mode', 'dontAsk'] } } } },
    }
    expect(argv('claude', { mode: 'headless', kind: 'start', prompt: 'x' }, config)).toContain('dontAsk')
    expect(argv('claude', { mode: 'interactive', kind: 'start', prompt: 'x' }, config)).toEqual([
      'claude',
      '--permission-mode',
      'default',
      'x',
    ])
  })

  test('null clears a built-in field', () => {
    const config: ProvidersConfig = { providers: { codex: { session_id_capture: null, resume_by_id: null } } }
    expect(resolveProvider('codex', config).session_id_capture).toBeNull()
    expect(argv('codex', { mode: 'headless', kind: 'resume', agentSessionId: UUID }, config)).toEqual([
      'codex',
      'exec',
      '--sandbox',
      'workspace-write',
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
