import type { ProviderSpec } from './schema.js'

/**
 * The built-in providers of SPEC §6, in the shape config.json uses (docs/providers.md), so that a user's
 * entry overrides them field by field. Flags follow each CLI's `--help`; the argv each one produces is pinned
 * by test/unit/providers.test.ts.
 */
export const BUILTIN_PROVIDERS = {
  claude: {
    description: 'Claude Code',
    command: 'claude',
    // `-p` (print) is a switch in claude; the prompt itself is positional in both modes.
    mode_args: { headless: ['-p'], interactive: [] },
    prompt: ['{prompt}'],
    start_args: ['--session-id', '{session_id}'],
    resume: ['--continue'],
    resume_by_id: ['--resume', '{session_id}'],
    permission: {
      readonly: ['--permission-mode', 'plan'],
      supervised: [],
      autonomous: ['--dangerously-skip-permissions'],
    },
    model_args: ['--model', '{model}'],
  },
  gemini: {
    description: 'Gemini CLI',
    command: 'gemini',
    prompt: { headless: ['-p', '{prompt}'], interactive: ['-i', '{prompt}'] },
    start_args: ['--session-id', '{session_id}'],
    resume: ['--resume', 'latest'],
    resume_by_id: ['--resume', '{session_id}'],
    permission: {
      readonly: ['--approval-mode', 'plan'],
      supervised: [],
      autonomous: ['--approval-mode', 'yolo'],
    },
    model_args: ['-m', '{model}'],
  },
  codex: {
    description: 'OpenAI Codex CLI',
    command: 'codex',
    mode_args: { headless: ['exec'], interactive: [] },
    prompt: ['{prompt}'],
    // `codex exec --sandbox …` is not accepted after `resume`, so resume tokens come after the flags.
    resume: ['resume', '--last'],
    resume_by_id: ['resume', '{session_id}'],
    permission: {
      readonly: ['--sandbox', 'read-only'],
      supervised: [],
      autonomous: ['--dangerously-bypass-approvals-and-sandbox'],
    },
    model_args: ['-m', '{model}'],
    session_id_capture: { key: 'thread_id', args: ['--json'] },
  },
  opencode: {
    description: 'OpenCode',
    command: 'opencode',
    mode_args: { headless: ['run'], interactive: [] },
    prompt: { headless: ['{prompt}'], interactive: ['--prompt', '{prompt}'] },
    resume: ['--continue'],
    resume_by_id: ['--session', '{session_id}'],
    permission: { supervised: [], autonomous: ['--auto'] },
    model_args: ['-m', '{model}'],
    session_id_capture: { key: 'sessionID', args: ['--format', 'json'] },
  },
  agy: {
    description: 'Antigravity CLI',
    command: 'agy',
    // `-i` opens the interactive UI, which needs a terminal; `-p` is agy's headless (print) form.
    prompt: { headless: ['-p', '{prompt}'], interactive: ['-i', '{prompt}'] },
    resume: ['--continue'],
    permission: {
      readonly: ['--mode', 'plan'],
      supervised: [],
      autonomous: ['--dangerously-skip-permissions'],
    },
    model_args: ['--model', '{model}'],
  },
  'pi-agent': {
    description: 'pi coding agent',
    command: 'pi',
    // pi's `-p` is a print-and-exit switch; interactively the prompt is the first message.
    mode_args: { headless: ['-p'], interactive: [] },
    prompt: ['{prompt}'],
    // `--resume` opens a session picker; the worktree holds only this session's conversation.
    resume: ['--continue'],
    permission: { supervised: [], autonomous: ['--dangerously-skip-permissions'] },
    model_args: ['--model', '{model}'],
  },
  aider: {
    description: 'aider',
    command: 'aider',
    prompt: ['--message', '{prompt}'],
    resume: ['--restore-chat-history'],
    permission: { supervised: [], autonomous: ['--yes-always'] },
    model_args: ['--model', '{model}'],
  },
  exec: {
    description: 'any command, given after --',
    // No command and no prompt: the arguments after `--` are the command, run again on resume.
    prompt: [],
    permission: { readonly: [], supervised: [], autonomous: [] },
  },
} satisfies Record<string, ProviderSpec>

export type BuiltinProviderName = keyof typeof BUILTIN_PROVIDERS
export const BUILTIN_PROVIDER_NAMES = Object.keys(BUILTIN_PROVIDERS) as BuiltinProviderName[]

export function isBuiltinProvider(name: string): name is BuiltinProviderName {
  return Object.hasOwn(BUILTIN_PROVIDERS, name)
}
