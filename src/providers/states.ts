/** What an interactive agent's screen says it is doing (recorded as the session's `state`). */
export const AGENT_STATES = ['busy', 'waiting', 'idle'] as const
export type AgentState = (typeof AGENT_STATES)[number]

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
  // screens. Claude Code 2.1 started offline in tmux shows only "Unable to connect to Anthropic services" and
  // exits, so no further screen could be captured from it.
  claude: {
    waiting: [
      '(do you want|would you like)[^\\n]*\\n[\\s\\S]*(yes|❯)',
      'esc to cancel',
      '\\d+\\.\\s*deny\\s*\\(esc\\)',
    ],
    busy: [...INTERRUPT_HINTS, '^\\s*[✱✲✳✴✵✶✷✸✹✺✻✼✽✾✿✢✣✤✥✦✧·•∙⋅] \\S+ing[^\\n]*…'],
  },
  // Codex CLI: approval overlays ("Allow command?", "Yes (y)", "Press Enter to confirm or Esc to cancel",
  // "[y/n]") and its question tool ("enter to submit answer"), from ccmanager
  // (src/services/stateDetector/codex.ts) and agent-deck (internal/tmux/patterns.go); "Press enter to
  // continue" under a numbered menu is codex-cli 0.171's first screen, captured in tmux (its sign-in choice).
  // Busy shows "esc to interrupt".
  codex: {
    waiting: [
      'press enter to confirm or esc to cancel',
      'press enter to continue',
      'confirm with .+ enter',
      'enter to submit answer',
      'allow command\\?',
      '\\[y/n\\]',
      'yes \\(y\\)',
      '(do you want|would you like)[^\\n]*\\n[\\s\\S]*\\byes\\b',
    ],
    busy: ['esc[^\\n]*to interrupt', 'ctrl\\+c to interrupt'],
  },
  // Gemini CLI: tool confirmations ("Apply this change?", "Allow execution of …?", "Do you want to proceed?",
  // "Waiting for user confirmation"), from packages/cli/src/ui/components/messages/ToolConfirmationMessage.tsx
  // in gemini-cli as ccmanager reads them (src/services/stateDetector/gemini.ts); "Do you trust the files in
  // this folder?" over "● 1. Trust folder" is gemini-cli 0.61's first screen in a new folder, captured in tmux.
  // Busy shows "(esc to cancel, 12s)" under its spinner.
  gemini: {
    waiting: [
      'waiting for user confirmation',
      'do you trust the files in this folder\\?',
      '(allow execution|do you want to|apply this change)[\\s\\S]*\\b(yes|allow)\\b',
    ],
    busy: ['esc to cancel'],
  },
  // OpenCode: "△ Permission required" over its allow/reject choices; busy shows "esc interrupt" in the status
  // bar. From ccmanager (src/services/stateDetector/opencode.ts) and agent-deck (internal/tmux/patterns.go);
  // opencode started offline in tmux drew nothing to capture.
  opencode: {
    waiting: ['△ permission required'],
    busy: ['esc[^\\n]*interrupt', 'thinking\\.\\.\\.', 'generating\\.\\.\\.', 'waiting for tool response'],
  },
  // pi (pi-coding-agent 0.73): no permission prompts by design (docs/providers.md); it waits only when an
  // extension asks, with a selector ("enter select · escape cancel") or an input ("enter submit · escape
  // cancel"), as dist/modes/interactive/components/extension-selector.js and extension-input.js draw them.
  // Busy is its loader "Working... (escape to interrupt)" (interactive-mode.js). Its header always reads
  // "escape interrupt · ctrl+c/ctrl+d clear/exit" (captured in tmux), so a bare "interrupt" means nothing.
  'pi-agent': {
    waiting: ['enter (select|submit)[^\\n]*(esc|escape) cancel'],
    busy: ['working\\.\\.\\.', '(esc|escape) to interrupt'],
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
