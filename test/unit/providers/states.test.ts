import { describe, expect, test } from 'vitest'
import { detectAgentState, STATE_PATTERNS, statePatternsFor } from '../../../src/providers/states.js'
import type { SessionRecord } from '../../../src/sessions/record/schema.js'
import { hookEnv, statusChange } from '../../../src/sessions/record/status-hooks.js'

const state = (provider: string, screen: string) => detectAgentState(screen, statePatternsFor(provider))

describe('agent state from the screen', () => {
  test('every provider named in the docs has patterns, each of them a valid expression', () => {
    expect(Object.keys(STATE_PATTERNS).sort()).toEqual(['claude', 'codex', 'gemini', 'opencode', 'pi-agent'])
    for (const patterns of Object.values(STATE_PATTERNS)) {
      for (const source of [...patterns.waiting, ...patterns.busy])
        expect(() => new RegExp(source)).not.toThrow()
    }
  })

  test('claude: a permission dialog waits, a spinner is busy, the bare prompt is idle', () => {
    expect(
      state('claude', 'Edit notes.txt\n\nDo you want to make this edit to notes.txt?\n❯ 1. Yes\n  2. No\n'),
    ).toBe('waiting')
    expect(state('claude', '⏺ Reading files\n\n✻ Pondering… (12s · esc to interrupt)\n')).toBe('busy')
    expect(state('claude', '✶ Simplifying… (3s)\n')).toBe('busy')
    expect(state('claude', '────────\n> \n────────\n  ? for shortcuts\n')).toBe('idle')
  })

  test('codex: its sign-in menu (captured from codex-cli 0.171) and approvals wait; esc to interrupt is busy', () => {
    const signIn = `  Welcome to Codex, OpenAI's command-line coding agent
  Choose how you want to use Codex.
> 1. Sign in with ChatGPT
  2. Sign in with Device Code
  3. Sign in another way
  Press enter to continue`
    expect(state('codex', signIn)).toBe('waiting')
    expect(state('codex', 'Allow command?\n  Yes (y)   No (n)\n')).toBe('waiting')
    expect(state('codex', '• Working (4s • esc to interrupt)\n')).toBe('busy')
    expect(state('codex', '› Ask Codex to do anything\n')).toBe('idle')
  })

  test('gemini: the trust dialog (captured from gemini-cli 0.61) waits; its tips screen is idle', () => {
    const tips = `Tips for getting started:
1. Create GEMINI.md files to customize your interactions
2. /help for more information
 > Type your message or @path/to/file`
    expect(state('gemini', tips)).toBe('idle')
    const trust = ` │ Do you trust the files in this folder?                     │
 │ ● 1. Trust folder (proj)                                    │
 │   2. Trust parent folder (tmp)                              │
 │   3. Don't trust                                            │`
    expect(state('gemini', trust)).toBe('waiting')
    expect(state('gemini', '⠏ Thinking about it (esc to cancel, 5s)\n')).toBe('busy')
    expect(state('gemini', ' │ Apply this change?\n │ ● 1. Yes, allow once\n')).toBe('waiting')
  })

  test('pi: the header\'s "escape interrupt" (captured from pi 0.73) is idle; its loader is busy', () => {
    const header = ` pi v0.73.1
 escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash · ctrl+o more
/tmp/proj (master)`
    expect(state('pi-agent', header)).toBe('idle')
    expect(state('pi-agent', `${header}\n⠋ Working... (escape to interrupt)`)).toBe('busy')
    expect(state('pi-agent', 'Pick one\n→ a\n  b\nenter select · escape cancel')).toBe('waiting')
  })

  test('opencode, and a provider without patterns', () => {
    expect(state('opencode', '△ Permission required\n  Allow  Reject\n')).toBe('waiting')
    expect(state('opencode', 'build · esc interrupt\n')).toBe('busy')
    expect(state('aider', 'Add file to the chat? (Y)es/(N)o [Yes]:')).toBe('idle')
    expect(state('aider', 'Do you want to proceed? [y/n]')).toBe('waiting')
  })

  test('only the bottom of the screen counts', () => {
    const old = 'Do you want to make this edit?\n❯ 1. Yes\n'
    const filler = Array.from({ length: 40 }, (_, i) => `line ${i}`).join('\n')
    expect(state('claude', `${old}${filler}\n`)).toBe('idle')
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
