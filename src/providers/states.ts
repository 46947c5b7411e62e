import type { AgentState } from '../sessions/schema.js'

/**
 * How to read an agent's state from its screen (the text of its tmux pane), per provider, as data
 * (docs/tmux.md). `waiting` patterns are tried first (a question to the user), then `busy`; a screen that
 * matches neither is `idle`. Patterns are case-insensitive regular expressions matched against the last
 * `lines` non-empty lines of the screen, where the agents draw their status and their questions.
 */
export interface StatePatterns {
  waiting: string[]
  busy: string[]
  /** How many non-empty lines from the bottom of the screen to look at. */
  lines?: number
}

const DEFAULT_LINES = 30

/** Busy markers nearly every terminal agent prints under its spinner. */
const INTERRUPT_HINTS = ['esc to interrupt', 'ctrl\\+c to interrupt']

export const STATE_PATTERNS: Record<string, StatePatterns> = {
  // Claude Code: permission dialogs ("Do you want to make this edit to x?" over "❯ 1. Yes" / "2. No"), "esc to
  // cancel" in its question dialogs, and "N. Deny (esc)" menus; busy shows "esc to interrupt" (newer versions
  // "ctrl+c to interrupt") and a spinner line such as "✻ Pondering…". From the detectors of ccmanager
  // (src/services/stateDetector/claude.ts) and agent-deck (internal/tmux/patterns.go), which read the same
  // screens; checked against the installed CLI's first screen (docs/tmux.md).
  claude: {
    waiting: [
      '(do you want|would you like)[^\\n]*\\n[\\s\\S]*(yes|❯)',
      'esc to cancel',
      '\\d+\\.\\s*deny\\s*\\(esc\\)',
    ],
    busy: [...INTERRUPT_HINTS, '^\\s*[✱✲✳✴✵✶✷✸✹✺✻✼✽✾✿✢✣✤✥✦✧·•∙⋅] \\S+ing[^\\n]*…'],
  },
  // Codex CLI: approval overlays ("Allow command?", "Yes (y)", "Press Enter to confirm or Esc to cancel",
  // "[y/n]") and its question tool ("enter to submit answer"); busy shows "esc to interrupt". From ccmanager
  // (src/services/stateDetector/codex.ts) and agent-deck (internal/tmux/patterns.go).
  codex: {
    waiting: [
      'press enter to confirm or esc to cancel',
      'confirm with .+ enter',
      'enter to submit answer',
      'allow command\\?',
      '\\[y/n\\]',
      'yes \\(y\\)',
      '(do you want|would you like)[^\\n]*\\n[\\s\\S]*\\byes\\b',
    ],
    busy: ['esc[^\\n]*interrupt', 'ctrl\\+c to interrupt'],
  },
  // Gemini CLI: tool confirmations ("Apply this change?", "Allow execution of …?", "Do you want to proceed?",
  // "Waiting for user confirmation"), from packages/cli/src/ui/components/messages/ToolConfirmationMessage.tsx
  // in gemini-cli, as ccmanager reads them (src/services/stateDetector/gemini.ts); busy shows "(esc to cancel,
  // 12s)" under its spinner.
  gemini: {
    waiting: [
      'waiting for user confirmation',
      '(allow execution|do you want to|apply this change)[\\s\\S]*\\byes\\b',
    ],
    busy: ['esc to cancel'],
  },
  // OpenCode: "△ Permission required" over its allow/reject choices, and its question tool ("enter submit",
  // "esc dismiss"); busy shows "esc interrupt" in the status bar. From ccmanager
  // (src/services/stateDetector/opencode.ts) and agent-deck (internal/tmux/patterns.go).
  opencode: {
    waiting: ['△ permission required', 'permission required'],
    busy: ['esc[^\\n]*interrupt', 'thinking\\.\\.\\.', 'generating\\.\\.\\.', 'waiting for tool response'],
  },
  // pi (pi-coding-agent): no permission prompts by design (docs/providers.md), so it waits only when one of
  // its extensions asks (a selector with "enter to select"/"esc to cancel"); busy shows a braille spinner with
  // "Working..." and "esc to interrupt". From agent-deck (internal/tmux/patterns.go, case "pi") and pi's
  // interactive mode (packages/coding-agent/src/modes/interactive in pi-mono).
  'pi-agent': {
    waiting: ['enter to (select|confirm)[^\\n]*esc to cancel', '\\(y/n\\)'],
    busy: [...INTERRUPT_HINTS, '^\\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ', 'working\\.\\.\\.'],
  },
}

/** A provider without patterns of its own: a question asked the common ways, and the common busy hints. */
export const FALLBACK_PATTERNS: StatePatterns = {
  waiting: ['(do you want|would you like|allow|proceed)[^\\n]*\\?[\\s\\S]*(yes|\\[y/n\\]|\\(y/n\\))'],
  busy: [...INTERRUPT_HINTS],
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

/** The state a screen shows. Pure: the tmux supervisor feeds it `capture-pane` text. */
export function detectAgentState(screen: string, patterns: StatePatterns): AgentState {
  const lines = screen
    .replace(/\r/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
  const text = lines.slice(-(patterns.lines ?? DEFAULT_LINES)).join('\n')
  if (patterns.waiting.some((p) => regex(p).test(text))) return 'waiting'
  if (patterns.busy.some((p) => regex(p).test(text))) return 'busy'
  return 'idle'
}
