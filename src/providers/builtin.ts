import type { ProviderSpec } from './schema.js'

/**
 * The built-in providers, in the shape config.json uses (docs/providers.md), so that a user's entry overrides
 * them field by field. Flags follow each CLI's `--help`; the argv each one produces, and the help line behind
 * each flag, are pinned by test/unit/providers/args.test.ts.
 */
export const BUILTIN_PROVIDERS = {
  claude: {
    description: 'Claude Code',
    command: 'claude',
    // `-p` (print) is a switch in claude; the prompt itself is positional in both modes. Headless output is
    // the JSON event stream (usage is read from it); claude requires --verbose with stream-json under -p.
    mode_args: { headless: ['-p', '--output-format', 'stream-json', '--verbose'], interactive: [] },
    prompt: ['{prompt}'],
    start_args: ['--session-id', '{session_id}'],
    resume: ['--continue'],
    resume_by_id: ['--resume', '{session_id}'],
    // Every level explicit (SPEC §6): claude 2.1.3xx made "auto mode" its default, in which tool calls run
    // without asking. Headless nobody can answer, so supervised accepts edits (commands are refused).
    permission: {
      readonly: ['--permission-mode', 'plan'],
      supervised: {
        headless: ['--permission-mode', 'acceptEdits'],
        interactive: ['--permission-mode', 'default'],
      },
      autonomous: ['--dangerously-skip-permissions'],
    },
    // claude exits 1 at once as root with --dangerously-skip-permissions, unless IS_SANDBOX=1.
    refused_as_root: { permission: ['autonomous'], unless_env: { IS_SANDBOX: '1' } },
    model_args: ['--model', '{model}'],
    // "Maximum dollar amount to spend on API calls (only works with --print)": headless only.
    budget_args: ['--max-budget-usd', '{budget}'],
    headless_output: 'claude-stream-json',
  },
  gemini: {
    description: 'Gemini CLI',
    command: 'gemini',
    // Headless output is the JSON event stream: its `result` event carries the run's token usage (plain text
    // carries none, so harness recorded no usage for gemini).
    mode_args: { headless: ['--output-format', 'stream-json'], interactive: [] },
    prompt: { headless: ['-p', '{prompt}'], interactive: ['-i', '{prompt}'] },
    start_args: ['--session-id', '{session_id}'],
    resume: ['--resume', 'latest'],
    resume_by_id: ['--resume', '{session_id}'],
    // A new worktree is an untrusted folder to gemini, which then drops the approval mode (and, once
    // authenticated, exits 55 headless): hence --skip-trust at every level.
    permission: {
      readonly: ['--approval-mode', 'plan', '--skip-trust'],
      supervised: {
        headless: ['--approval-mode', 'auto_edit', '--skip-trust'],
        interactive: ['--approval-mode', 'default', '--skip-trust'],
      },
      autonomous: ['--approval-mode', 'yolo', '--skip-trust'],
    },
    model_args: ['-m', '{model}'],
    // Its `result` event (stream-json) or its one document (json): the only lines whose usage counts.
    headless_output: 'gemini-json',
  },
  codex: {
    description: 'OpenAI Codex CLI',
    command: 'codex',
    mode_args: { headless: ['exec'], interactive: [] },
    prompt: ['{prompt}'],
    // `codex exec resume` takes no --sandbox, so the flags come before `resume` (parsed by `exec`). Without a
    // captured id, interactive `resume --last` skips sessions started headless unless told to include them.
    resume: {
      headless: ['resume', '--last'],
      interactive: ['resume', '--last', '--include-non-interactive'],
    },
    resume_by_id: ['resume', '{session_id}'],
    // Headless codex defaults to a read-only sandbox: supervised must ask for workspace-write to edit anything.
    // Interactively it asks before leaving the sandbox: `on-request` is the asking policy codex 0.171's
    // `--help` offers (`exec` takes no --ask-for-approval).
    permission: {
      readonly: ['--sandbox', 'read-only'],
      supervised: {
        headless: ['--sandbox', 'workspace-write'],
        interactive: ['--sandbox', 'workspace-write', '--ask-for-approval', 'on-request'],
      },
      autonomous: ['--dangerously-bypass-approvals-and-sandbox'],
    },
    model_args: ['-m', '{model}'],
    session_id_capture: { key: 'thread_id', args: ['--json'] },
    headless_output: 'codex-json',
    help_args: [['--help'], ['exec', '--help'], ['resume', '--help'], ['exec', 'resume', '--help']],
  },
  opencode: {
    description: 'OpenCode',
    command: 'opencode',
    mode_args: { headless: ['run'], interactive: [] },
    prompt: { headless: ['{prompt}'], interactive: ['--prompt', '{prompt}'] },
    // Never `--continue`: opencode keys "latest" by project, and every worktree of a repository is the same
    // project to it. The id is captured headless and read from opencode's session list after an
    // interactive start; without it a resume is refused.
    resume_by_id: ['--session', '{session_id}'],
    resume_needs_id: true,
    // opencode has no read-only switch; its built-in "plan" agent denies edits (bash stays allowed). Its
    // "build" agent (the default, named so a changed default cannot change the level) asks only before
    // touching files outside the project; `--auto` approves even that.
    permission: { readonly: ['--agent', 'plan'], supervised: ['--agent', 'build'], autonomous: ['--auto'] },
    model_args: ['-m', '{model}'],
    session_id_capture: { key: 'sessionID', args: ['--format', 'json'] },
    headless_output: 'opencode-json',
    help_args: [['--help'], ['run', '--help']],
  },
  agy: {
    description: 'Antigravity CLI',
    command: 'agy',
    // Unverified (agy is not published where the others are): `harness doctor` compares these with `agy --help`.
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
    // pi's `-p` is a print-and-exit switch; interactively the prompt is the first message. Headless output is
    // the JSON event stream, in which pi exits 0 even when the model request failed (harness reads the events).
    mode_args: { headless: ['-p', '--mode', 'json'], interactive: [] },
    prompt: ['{prompt}'],
    // pi's parser has no `--` and reads any word beginning with "-" as an option: such a prompt gets a space.
    dash_prompt: 'leading-space',
    // harness owns the conversation file, so each session resumes exactly its own (`--continue` takes the
    // folder's latest, `--resume` opens a picker); pi creates the file at the path it is given.
    start_args: ['--session', '{agent_dir}/pi.jsonl'],
    resume: ['--session', '{agent_dir}/pi.jsonl'],
    // pi has no permission prompts: only readonly changes anything, by allowing read-only tools alone.
    permission: { readonly: ['--tools', 'read,grep,find,ls'], supervised: [], autonomous: [] },
    model_args: ['--model', '{model}'],
    headless_output: 'pi-json',
  },
  aider: {
    description: 'aider',
    command: 'aider',
    // `--message` means "reply once and exit": interactively the chat starts without it (harness shows the
    // prompt for the user to paste).
    prompt: { headless: ['--message', '{prompt}'], interactive: [] },
    // A history file per session: the folder's shared default would mix sessions that share a folder.
    start_args: ['--chat-history-file', '{agent_dir}/aider.chat.md'],
    resume: ['--chat-history-file', '{agent_dir}/aider.chat.md', '--restore-chat-history'],
    // aider has no read-only mode; it asks before each edit unless --yes-always.
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
