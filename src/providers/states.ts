/**
 * What an interactive agent's screen says it is doing (recorded as the session's `state`); `unknown` when the
 * screen matches none of its provider's patterns: a screen nobody has seen is never guessed at.
 */
const AGENT_STATES = ['busy', 'waiting', 'idle', 'unknown'] as const
export type AgentState = (typeof AGENT_STATES)[number]

/**
 * How to read an agent's state from its screen (the text of its tmux pane), per provider, as data
 * (docs/tmux.md). `waiting` patterns are tried first (a question to the user), then `busy`, then `idle`; a
 * screen that matches none is `unknown`. Patterns are case-insensitive regular expressions matched against the
 * last `lines` non-empty lines of the screen (terminal escapes removed), where the agents draw their status and
 * their questions. Each pattern says which screen it was read from: the real CLIs' screens are kept as
 * fixtures in test/fixtures/screens/<cli>/, and a unit test replays every one of them.
 */
export interface StatePatterns {
  waiting: string[]
  busy: string[]
  /** The agent's own sign that it waits at its prompt for a new task; none: `unknown` instead of `idle`. */
  idle: string[]
  /** How many non-empty lines from the bottom of the screen to look at. */
  lines?: number
}

const DEFAULT_LINES = 30

/** Busy markers nearly every terminal agent prints under its spinner. */
const INTERRUPT_HINTS = ['esc to interrupt', 'ctrl\\+c to interrupt']

/** A question asked the common ways (ccmanager's and agent-deck's detectors read these). */
const YES_NO_QUESTION = '(do you want|would you like)[^\\n]*\\?[^\\n]*\\n[\\s\\S]*(\\byes\\b|❯)'

export const STATE_PATTERNS: Record<string, StatePatterns> = {
  // Claude Code 2.1.332, captured in tmux (test/fixtures/screens/claude/).
  claude: {
    waiting: [
      // folder-trust ("Quick safety check … ❯ No, exit / Yes, I trust this folder") and api-key ("Do you want
      // to use this API key?") both end "Enter to confirm · Esc to cancel".
      'enter to confirm · esc to cancel',
      // theme-picker (/theme, the dialog onboarding opens with): "Enter to select · Esc to cancel".
      'enter to select · esc to cancel',
      // permission-write: "Do you want to create made-by-agent.txt?" over "❯ 1. Yes", "Esc to cancel · Tab to
      // amend"; the same question form in older versions (ccmanager, agent-deck).
      'esc to cancel · tab to amend',
      YES_NO_QUESTION,
      // Onboarding's "Press Enter to continue" (its security notes; not reachable offline, named in #24), and
      // "N. Deny (esc)" menus of older versions (agent-deck).
      'press enter to continue',
      '\\d+\\.\\s*deny\\s*\\(esc\\)',
    ],
    // busy: "✻ Recombobulating…" over the footer "⏸ manual mode on · esc to interrupt".
    busy: [...INTERRUPT_HINTS, '^\\s*[✱✲✳✴✵✶✷✸✹✺✻✼✽✾✿✢✣✤✥✦✧·•∙⋅] \\S+ing[^\\n]*…'],
    // idle, idle-after-turn, api-error: the footer "? for shortcuts" under the input box.
    idle: ['\\? for shortcuts'],
  },
  // codex-cli 0.171.0, captured in tmux (test/fixtures/screens/codex/).
  codex: {
    waiting: [
      // sign-in-menu and sign-in-other: "Press enter to continue".
      'press enter to continue',
      // browser-sign-in: "Finish signing in via your browser … Press esc to cancel".
      'finish signing in via your browser',
      // api-key: "Paste or type your API key below … Press enter to save".
      'press enter to save',
      // folder-trust: "Trust this folder? … › 1. Trust and continue … enter continue · esc back".
      'enter continue · esc back',
      // Approval overlays and its question tool, from ccmanager and agent-deck (not reached offline).
      'press enter to confirm or esc to cancel',
      'confirm with .+ enter',
      'enter to submit answer',
      'allow command\\?',
      '\\[y/n\\]',
      'yes \\(y\\)',
      YES_NO_QUESTION,
    ],
    // reconnecting: "• Reconnecting... 3/5 (1s • esc to interrupt)"; a turn at work: "(4s • esc to interrupt)".
    busy: ['esc[^\\n]*to interrupt', 'ctrl\\+c to interrupt'],
    // idle: "› Ask Codex to do anything" over "← for agents · ? for shortcuts".
    idle: ['\\? for shortcuts', '^› ask codex to do anything'],
  },
  // gemini-cli 0.61.0, captured in tmux (test/fixtures/screens/gemini/).
  gemini: {
    waiting: [
      // folder-trust: "Do you trust the files in this folder?" over "● 1. Trust folder (repo)".
      'do you trust the files in this folder\\?',
      // auth-wait: "⠋ Waiting for authentication... (Press Esc or Ctrl+C to cancel)": a browser sign-in.
      'waiting for authentication',
      // auth-method: "How would you like to authenticate for this project?" … "(Use Enter to select)".
      'how would you like to authenticate',
      // api-key: "Enter Gemini API Key" … "(Press Enter to submit, Esc to cancel, …)".
      'press enter to submit, esc to cancel',
      // Tool confirmations, from ToolConfirmationMessage.tsx as ccmanager reads them (not reached offline).
      'waiting for user confirmation',
      '(allow execution|do you want to|apply this change)[\\s\\S]*\\b(yes|allow)\\b',
    ],
    // Its spinner line "(esc to cancel, 12s)" (LoadingIndicator.tsx); a bare "Esc to cancel" is a dialog's.
    busy: ['\\(esc to cancel, [^)]*\\d+s\\)'],
    // The input box's placeholder (InputPrompt.tsx); gemini reached no prompt offline.
    idle: ['type your message or @path/to/file'],
  },
  // OpenCode 1.18.33 started offline in tmux drew nothing ("creating instance" in its log, a blank pane), so
  // these come from ccmanager and agent-deck alone: "△ Permission required" over its choices; "esc interrupt"
  // in the status bar. No idle sign is known: a screen that is neither is `unknown`.
  opencode: {
    waiting: ['△ permission required'],
    busy: ['esc[^\\n]*interrupt', 'thinking\\.\\.\\.', 'generating\\.\\.\\.', 'waiting for tool response'],
    idle: [],
  },
  // pi-coding-agent 0.73.1, captured in tmux (test/fixtures/screens/pi/). No permission prompts by design
  // (docs/providers.md); it waits only when an extension asks, with a selector ("enter select · escape
  // cancel") or an input ("enter submit · escape cancel"), as extension-selector.js and extension-input.js draw.
  'pi-agent': {
    waiting: ['enter (select|submit)[^\\n]*(esc|escape) cancel'],
    // retry: "⠧ Retrying (1/3) in 2s... (escape to cancel)"; its loader "Working... (escape to interrupt)".
    // The header always reads "escape interrupt · ctrl+c/ctrl+d clear/exit", so a bare "interrupt" is nothing.
    busy: ['working\\.\\.\\.', '(esc|escape) to interrupt', 'retrying \\(\\d+/\\d+\\) in \\d+'],
    // idle, retry-failed: the footer's context gauge "0.0%/128k (auto)" under the input box.
    idle: ['^\\s*\\d+(\\.\\d+)?%/\\d+k\\b'],
  },
}

/**
 * A provider without patterns of its own: a question asked the common ways, and the common busy hints. No
 * idle sign is common to all agents, so whatever else such a screen shows is `unknown`.
 */
const FALLBACK_PATTERNS: StatePatterns = {
  waiting: ['(do you want|would you like|allow|proceed)[^\\n]*\\?[\\s\\S]*(yes|\\[y/n\\]|\\(y/n\\))'],
  busy: [...INTERRUPT_HINTS],
  idle: [],
}

export function statePatternsFor(provider: string): StatePatterns {
  return STATE_PATTERNS[provider] ?? FALLBACK_PATTERNS
}

const compiled = new Map<string, RegExp>()
function regex(source: string): RegExp {
  let re = compiled.get(source)
  if (!re) {
    re = new RegExp(source, 'im')
    compiled.set(source, re)
  }
  return re
}

/** CSI, OSC and two-byte escape sequences, as `capture-pane -e` keeps them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const ESCAPES = /\u001b(\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(\u0007|\u001b\\)|[()][0-9A-Za-z]|[@-Z\\-_])/g

/** The state a screen shows. Pure: the tmux supervisor feeds it `capture-pane` text. */
export function detectAgentState(screen: string, patterns: StatePatterns): AgentState {
  const lines = screen
    .replace(ESCAPES, '')
    .replace(/\r/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
  const text = lines.slice(-(patterns.lines ?? DEFAULT_LINES)).join('\n')
  if (patterns.waiting.some((p) => regex(p).test(text))) return 'waiting'
  if (patterns.busy.some((p) => regex(p).test(text))) return 'busy'
  if (patterns.idle.some((p) => regex(p).test(text))) return 'idle'
  return 'unknown'
}
