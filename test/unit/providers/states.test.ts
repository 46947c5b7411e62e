import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import {
  type AgentState,
  detectAgentState,
  STATE_PATTERNS,
  statePatternsFor,
} from '../../../src/providers/states.js'
import type { SessionRecord } from '../../../src/sessions/record/schema.js'
import { hookEnv, statusChange } from '../../../src/sessions/record/status-hooks.js'

const state = (provider: string, screen: string) => detectAgentState(screen, statePatternsFor(provider))

/** The state each captured real screen shows (test/fixtures/screens/<cli>/<name>.txt; its first line says how). */
const SCREENS: Record<string, Record<string, AgentState>> = {
  claude: {
    'folder-trust': 'waiting',
    'api-key': 'waiting',
    'theme-picker': 'waiting',
    'permission-write': 'waiting',
    busy: 'busy',
    idle: 'idle',
    'idle-after-turn': 'idle',
    'api-error': 'idle',
    'bypass-permissions': 'waiting',
  },
  codex: {
    'sign-in-menu': 'waiting',
    'browser-sign-in': 'waiting',
    'sign-in-other': 'waiting',
    'api-key': 'waiting',
    'folder-trust': 'waiting',
    reconnecting: 'busy',
    idle: 'idle',
  },
  gemini: {
    'folder-trust': 'waiting',
    'auth-wait': 'waiting',
    'auth-method': 'waiting',
    'api-key': 'waiting',
  },
  pi: { retry: 'busy', idle: 'idle', 'retry-failed': 'idle' },
}
const PROVIDER: Record<string, string> = { pi: 'pi-agent' }
const SCREENS_DIR = new URL('../../fixtures/screens/', import.meta.url)

function screen(cli: string, file: string): { header: string; text: string } {
  const content = readFileSync(new URL(`${cli}/${file}`, SCREENS_DIR), 'utf8')
  const newline = content.indexOf('\n')
  return { header: content.slice(0, newline), text: content.slice(newline + 1) }
}

describe('agent state from the real screens', () => {
  test('every captured screen has an expected state, and names its CLI version and how it was reached', () => {
    for (const cli of readdirSync(SCREENS_DIR)) {
      for (const file of readdirSync(new URL(`${cli}/`, SCREENS_DIR))) {
        const name = file.replace(/(\.ansi)?\.txt$/, '')
        expect(SCREENS[cli]?.[name], `${cli}/${file}`).toBeDefined()
        expect(screen(cli, file).header).toMatch(new RegExp(`^# ${cli} \\d+\\.\\d+\\.\\d+: \\S`))
      }
    }
  })

  for (const [cli, names] of Object.entries(SCREENS)) {
    for (const [name, expected] of Object.entries(names)) {
      test(`${cli} ${name}: ${expected} (plain and with its terminal escapes)`, () => {
        const patterns = statePatternsFor(PROVIDER[cli] ?? cli)
        expect(detectAgentState(screen(cli, `${name}.txt`).text, patterns)).toBe(expected)
        expect(detectAgentState(screen(cli, `${name}.ansi.txt`).text, patterns)).toBe(expected)
      })
    }
  }
})

describe('agent state from the screen', () => {
  test('every provider named in the docs has patterns, each of them a valid expression', () => {
    expect(Object.keys(STATE_PATTERNS).sort()).toEqual(['claude', 'codex', 'gemini', 'opencode', 'pi-agent'])
    for (const patterns of Object.values(STATE_PATTERNS)) {
      for (const source of [...patterns.waiting, ...patterns.busy, ...patterns.idle])
        expect(() => new RegExp(source)).not.toThrow()
    }
  })

  test('a screen the patterns cannot tell is unknown, never a guess', () => {
    expect(
      state('claude', 'Welcome to Claude Code v2.1.332\nUnable to connect to Anthropic services\n'),
    ).toBe('unknown')
    // pi's header alone ("escape interrupt" is in it) is not busy, and without its footer not idle either.
    const header = ` pi v0.73.1
 escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more
/tmp/proj (master)`
    expect(state('pi-agent', header)).toBe('unknown')
    expect(state('pi-agent', `${header}\n⠋ Working... (escape to interrupt)`)).toBe('busy')
    expect(state('opencode', 'build  agent\n')).toBe('unknown')
    expect(state('aider', 'Add file to the chat? (Y)es/(N)o [Yes]:')).toBe('unknown')
  })

  test("patterns of screens not reachable offline, from the CLIs' sources", () => {
    expect(
      state('claude', 'Edit notes.txt\n\nDo you want to make this edit to notes.txt?\n❯ 1. Yes\n  2. No\n'),
    ).toBe('waiting')
    expect(state('claude', '✶ Simplifying… (3s)\n')).toBe('busy')
    expect(state('codex', 'Allow command?\n  Yes (y)   No (n)\n')).toBe('waiting')
    expect(state('gemini', '⠏ Thinking about it (esc to cancel, 5s)\n')).toBe('busy')
    expect(state('gemini', ' │ Apply this change?\n │ ● 1. Yes, allow once\n')).toBe('waiting')
    expect(state('gemini', ' > Type your message or @path/to/file')).toBe('idle')
    expect(state('pi-agent', 'Pick one\n→ a\n  b\nenter select · escape cancel')).toBe('waiting')
    expect(state('opencode', '△ Permission required\n  Allow  Reject\n')).toBe('waiting')
    expect(state('opencode', 'build · esc interrupt\n')).toBe('busy')
    expect(state('aider', 'Do you want to proceed? [y/n]')).toBe('waiting')
  })

  test('only the bottom of the screen counts', () => {
    const old = 'Do you want to make this edit?\n❯ 1. Yes\n'
    const filler = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n')
    expect(state('claude', `${old}${filler}\n  ? for shortcuts\n`)).toBe('idle')
  })
})

describe('status hooks', () => {
  const rec = (status: string, state?: string | null) => ({ id: 'abcd1234', status, state }) as SessionRecord

  test('a change of status or state, and nothing else, is a change', () => {
    expect(statusChange(null, rec('RUNNING'))).toEqual({
      id: 'abcd1234',
      status: 'RUNNING',
      previousStatus: '',
      state: '',
      previousState: '',
    })
    expect(statusChange(rec('RUNNING', 'busy'), rec('RUNNING', 'waiting'))).toMatchObject({
      previousState: 'busy',
      state: 'waiting',
    })
    expect(statusChange(rec('RUNNING', 'busy'), rec('RUNNING', 'busy'))).toBeNull()
    // A state left on a finished record is not one.
    expect(statusChange(rec('RUNNING', 'busy'), rec('KILLED', 'busy'))).toMatchObject({
      status: 'KILLED',
      state: '',
    })
    expect(statusChange(rec('KILLED', 'busy'), rec('KILLED', null))).toBeNull()
  })

  test('the environment names every part of the change', () => {
    const change = statusChange(rec('RUNNING', 'waiting'), rec('PAUSED'))
    expect(change && hookEnv(change)).toEqual({
      HARNESS_SESSION_ID: 'abcd1234',
      HARNESS_STATUS: 'PAUSED',
      HARNESS_PREVIOUS_STATUS: 'RUNNING',
      HARNESS_STATE: '',
      HARNESS_PREVIOUS_STATE: 'waiting',
    })
  })
})
