import { describe, expect, test } from 'vitest'
import {
  type ProvidersConfig,
  refusalAsRoot,
  resolveProvider,
  takesPrompt,
  usesAgentDir,
} from '../../../src/providers/args.js'
import { BUILTIN_PROVIDER_NAMES } from '../../../src/providers/builtin.js'
import { findReportedFailure } from '../../../src/providers/failure.js'
import { flagsMissingFromHelp, providerFlags } from '../../../src/providers/help.js'

describe('claude as root', () => {
  const claude = resolveProvider('claude')

  test('autonomous is refused as root, with the reason', () => {
    expect(refusalAsRoot(claude, 'autonomous', 0, {})).toBe(
      'claude refuses --dangerously-skip-permissions when run as root',
    )
  })

  test('other levels, other users, and claude’s own sandbox switch are fine', () => {
    expect(refusalAsRoot(claude, 'supervised', 0, {})).toBeUndefined()
    expect(refusalAsRoot(claude, 'readonly', 0, {})).toBeUndefined()
    expect(refusalAsRoot(claude, 'autonomous', 1000, {})).toBeUndefined()
    expect(refusalAsRoot(claude, 'autonomous', undefined, {})).toBeUndefined()
    expect(refusalAsRoot(claude, 'autonomous', 0, { IS_SANDBOX: '1' })).toBeUndefined()
    expect(refusalAsRoot(claude, 'autonomous', 0, { IS_SANDBOX: 'yes' })).toBeDefined()
  })

  test('no other built-in is refused as root; config can clear the rule', () => {
    for (const name of BUILTIN_PROVIDER_NAMES.filter((n) => n !== 'claude')) {
      expect(refusalAsRoot(resolveProvider(name), 'autonomous', 0, {}), name).toBeUndefined()
    }
    const config: ProvidersConfig = { providers: { claude: { refused_as_root: null } } }
    expect(refusalAsRoot(resolveProvider('claude', config), 'autonomous', 0, {})).toBeUndefined()
  })
})

describe('per-agent files and prompts', () => {
  test('pi and aider use the session’s agent folder; the others do not', () => {
    const using = BUILTIN_PROVIDER_NAMES.filter((name) => usesAgentDir(resolveProvider(name)))
    expect(using).toEqual(['pi-agent', 'aider'])
  })

  test('only aider takes no prompt interactively', () => {
    const none = BUILTIN_PROVIDER_NAMES.filter(
      (name) => name !== 'exec' && !takesPrompt(resolveProvider(name), 'interactive'),
    )
    expect(none).toEqual(['aider'])
    expect(takesPrompt(resolveProvider('aider'), 'headless')).toBe(true)
  })
})

describe('flagsMissingFromHelp (for doctor)', () => {
  const pi = resolveProvider('pi-agent')

  test('lists each flag harness would pass, once, without values', () => {
    expect(providerFlags(pi)).toEqual(['-p', '--mode', '--session', '--tools', '--model'])
    const config: ProvidersConfig = {
      providers: { mine: { command: 'mine', model_args: ['--model={model}'] } },
    }
    expect(providerFlags(resolveProvider('mine', config))).toEqual(['--model'])
  })

  test('a help that mentions every flag: nothing missing', () => {
    const help = [
      '  --model <pattern>              Model pattern or ID',
      '  --mode <mode>                  Output mode: text (default), json, or rpc',
      '  --print, -p                    Non-interactive mode: process prompt and exit',
      '  --session <path|id>            Use specific session file or partial UUID',
      '  --tools, -t <tools>            Comma-separated allowlist of tool names to enable',
    ].join('\n')
    expect(flagsMissingFromHelp(pi, help)).toEqual([])
  })

  test('a flag the help lacks is listed; a longer flag does not count for a shorter one', () => {
    const help = [
      '  --models <patterns>   Comma-separated model patterns',
      '  --mode <mode>         Output mode',
      '  --print, -p           Non-interactive mode',
      '  --session-dir <dir>   Directory for session storage',
      '  --no-tools, -nt       Disable all tools',
    ].join('\n')
    expect(flagsMissingFromHelp(pi, help)).toEqual(['--session', '--tools', '--model'])
  })

  test('agy: every flag is checked against its help', () => {
    const agy = resolveProvider('agy')
    expect(flagsMissingFromHelp(agy, '')).toEqual([
      '-p',
      '-i',
      '--continue',
      '--mode',
      '--dangerously-skip-permissions',
      '--model',
    ])
  })

  test('codex and opencode name the subcommand helps their flags are in', () => {
    expect(resolveProvider('codex').help_args).toContainEqual(['exec', '--help'])
    expect(resolveProvider('opencode').help_args).toContainEqual(['run', '--help'])
    expect(resolveProvider('claude').help_args).toEqual([['--help']])
  })
})

describe('findReportedFailure (pi --mode json exits 0 on a failed request)', () => {
  const assistant = (stopReason: string, errorMessage?: string) =>
    JSON.stringify({
      type: 'agent_end',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hello' }] },
        { role: 'assistant', content: [], stopReason, ...(errorMessage ? { errorMessage } : {}) },
      ],
    })

  test('the last agent_end ending in an error is a failure, with pi’s message', () => {
    const output = [
      '{"type":"session","version":3,"id":"01a2"}',
      assistant('error', 'Connection error.'),
      '{"type":"auto_retry_start","attempt":1,"maxAttempts":3}',
      assistant('error', 'Connection error.'),
      '{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"Connection error."}',
    ].join('\n')
    expect(findReportedFailure('pi-json', output)).toBe('Connection error.')
    expect(findReportedFailure('pi-json', assistant('aborted'))).toBe('request aborted')
  })

  test('a retry that succeeded, a normal end, or no events at all is no failure', () => {
    expect(findReportedFailure('pi-json', [assistant('error', 'x'), assistant('stop')].join('\n'))).toBe(
      undefined,
    )
    expect(findReportedFailure('pi-json', 'plain text\n{not json')).toBeUndefined()
    expect(findReportedFailure('pi-json', '')).toBeUndefined()
  })

  test('a tail that starts mid-line still finds the last event', () => {
    const output = `ntent":[]}}\n${assistant('error', 'boom')}\n`
    expect(findReportedFailure('pi-json', output)).toBe('boom')
  })

  test('other formats report failures by exit code: nothing is read', () => {
    expect(findReportedFailure('codex-json', assistant('error', 'x'))).toBeUndefined()
    expect(findReportedFailure(null, assistant('error', 'x'))).toBeUndefined()
  })
})
