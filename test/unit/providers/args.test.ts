import { describe, expect, test } from 'vitest'
import { ExitCode, UsageError } from '../../../src/errors.js'
import {
  type AgentInvocationInput,
  buildAgentInvocation,
  resolveProvider,
} from '../../../src/providers/args.js'
import { PERMISSIONS, type Permission } from '../../../src/providers/schema.js'

/**
 * Every built-in argv, written out by hand: start/resume × headless/interactive × readonly/supervised/
 * autonomous × with/without a model, plus a resume without the agent's id where one is used. Each provider's
 * block quotes the lines of the CLI's own `--help` that justify its flags (docs/providers.md, "Evidence", points
 * here). `<uuid>` is the id harness generates, `<thread>`/`<ses>` the id codex/opencode printed, `<dir>`
 * the session's `.harness/agents/<id>` folder; headless runs get the prompt "task" at start and the resume
 * prompt "continue" on resume; interactive resumes get none.
 */
const ARGV: Record<string, Record<string, string>> = {
  claude: {
    // claude --help (claude-code 2.1.197):
    // "Usage: claude [options] [command] [prompt]"                       → the prompt is positional in both modes
    // "-p, --print  Print response and exit (useful for pipes)."          → headless
    // "--output-format <format>  Output format (only works with --print): "text" (default), "json" (single
    //   result), or "stream-json" (realtime streaming)"                   → headless, read for usage
    // "--verbose  Override verbose mode setting from config"              → claude requires it with -p stream-json
    // "--session-id <uuid>  Use a specific session ID for the conversation (must be a valid UUID)" → start
    // "-r, --resume [value]  Resume a conversation by session ID, or open interactive picker …"   → resume by id
    // "-c, --continue  Continue the most recent conversation in the current directory"           → resume, no id
    // "--permission-mode <mode>  Permission mode to use for the session (choices: … "plan")"      → readonly
    // "--dangerously-skip-permissions  Bypass all permission checks."     → autonomous
    // "--model <model>  Model for the current session."                  → -m
    'start headless readonly':
      'claude -p --output-format stream-json --verbose --permission-mode plan --session-id <uuid> task',
    'start headless readonly model':
      'claude -p --output-format stream-json --verbose --permission-mode plan --model m1 --session-id <uuid> task',
    'start headless supervised':
      'claude -p --output-format stream-json --verbose --permission-mode acceptEdits --session-id <uuid> task',
    'start headless supervised model':
      'claude -p --output-format stream-json --verbose --permission-mode acceptEdits --model m1 --session-id <uuid> task',
    'start headless autonomous':
      'claude -p --output-format stream-json --verbose --dangerously-skip-permissions --session-id <uuid> task',
    'start headless autonomous model':
      'claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model m1 --session-id <uuid> task',
    'start interactive readonly': 'claude --permission-mode plan --session-id <uuid> task',
    'start interactive readonly model': 'claude --permission-mode plan --model m1 --session-id <uuid> task',
    'start interactive supervised': 'claude --permission-mode default --session-id <uuid> task',
    'start interactive supervised model':
      'claude --permission-mode default --model m1 --session-id <uuid> task',
    'start interactive autonomous': 'claude --dangerously-skip-permissions --session-id <uuid> task',
    'start interactive autonomous model':
      'claude --dangerously-skip-permissions --model m1 --session-id <uuid> task',
    'resume headless readonly':
      'claude -p --output-format stream-json --verbose --permission-mode plan --resume <uuid> continue',
    'resume headless readonly model':
      'claude -p --output-format stream-json --verbose --permission-mode plan --model m1 --resume <uuid> continue',
    'resume headless supervised':
      'claude -p --output-format stream-json --verbose --permission-mode acceptEdits --resume <uuid> continue',
    'resume headless supervised model':
      'claude -p --output-format stream-json --verbose --permission-mode acceptEdits --model m1 --resume <uuid> continue',
    'resume headless autonomous':
      'claude -p --output-format stream-json --verbose --dangerously-skip-permissions --resume <uuid> continue',
    'resume headless autonomous model':
      'claude -p --output-format stream-json --verbose --dangerously-skip-permissions --model m1 --resume <uuid> continue',
    'resume interactive readonly': 'claude --permission-mode plan --resume <uuid>',
    'resume interactive readonly model': 'claude --permission-mode plan --model m1 --resume <uuid>',
    'resume interactive supervised': 'claude --permission-mode default --resume <uuid>',
    'resume interactive supervised model': 'claude --permission-mode default --model m1 --resume <uuid>',
    'resume interactive autonomous': 'claude --dangerously-skip-permissions --resume <uuid>',
    'resume interactive autonomous model': 'claude --dangerously-skip-permissions --model m1 --resume <uuid>',
    'resume headless supervised, no id':
      'claude -p --output-format stream-json --verbose --permission-mode acceptEdits --continue continue',
    'resume interactive supervised, no id': 'claude --permission-mode default --continue',
  },
  gemini: {
    // gemini --help (gemini-cli 0.61.0):
    // "-p, --prompt  Run in non-interactive (headless) mode with the given prompt."        → headless prompt
    // "-i, --prompt-interactive  Execute the provided prompt and continue in interactive mode" → interactive
    // "--session-id  Start a new session with a manually provided UUID."                   → start
    // "-r, --resume  Resume a previous session. Use "latest" for most recent or index number" → resume
    // "--approval-mode  Set the approval mode: default (prompt for approval), auto_edit (auto-approve edit
    //   tools), yolo (auto-approve all tools), plan (read-only mode)"                      → readonly, autonomous
    // "--skip-trust  Trust the current workspace for this session."  → without it a new worktree is untrusted
    //   and gemini drops the approval mode ("Approval mode overridden to default …")
    // "-m, --model  Model"                                                                  → -m
    // "-o, --output-format  The format of the CLI output. [choices: "text", "json", "stream-json"]" → headless
    //   (its `result` event carries the run's token usage; measured in test/real/gemini.test.ts)
    'start headless readonly':
      'gemini --output-format stream-json --approval-mode plan --skip-trust --session-id <uuid> -p task',
    'start headless readonly model':
      'gemini --output-format stream-json --approval-mode plan --skip-trust -m m1 --session-id <uuid> -p task',
    'start headless supervised':
      'gemini --output-format stream-json --approval-mode auto_edit --skip-trust --session-id <uuid> -p task',
    'start headless supervised model':
      'gemini --output-format stream-json --approval-mode auto_edit --skip-trust -m m1 --session-id <uuid> -p task',
    'start headless autonomous':
      'gemini --output-format stream-json --approval-mode yolo --skip-trust --session-id <uuid> -p task',
    'start headless autonomous model':
      'gemini --output-format stream-json --approval-mode yolo --skip-trust -m m1 --session-id <uuid> -p task',
    'start interactive readonly': 'gemini --approval-mode plan --skip-trust --session-id <uuid> -i task',
    'start interactive readonly model':
      'gemini --approval-mode plan --skip-trust -m m1 --session-id <uuid> -i task',
    'start interactive supervised': 'gemini --approval-mode default --skip-trust --session-id <uuid> -i task',
    'start interactive supervised model':
      'gemini --approval-mode default --skip-trust -m m1 --session-id <uuid> -i task',
    'start interactive autonomous': 'gemini --approval-mode yolo --skip-trust --session-id <uuid> -i task',
    'start interactive autonomous model':
      'gemini --approval-mode yolo --skip-trust -m m1 --session-id <uuid> -i task',
    'resume headless readonly':
      'gemini --output-format stream-json --approval-mode plan --skip-trust --resume <uuid> -p continue',
    'resume headless readonly model':
      'gemini --output-format stream-json --approval-mode plan --skip-trust -m m1 --resume <uuid> -p continue',
    'resume headless supervised':
      'gemini --output-format stream-json --approval-mode auto_edit --skip-trust --resume <uuid> -p continue',
    'resume headless supervised model':
      'gemini --output-format stream-json --approval-mode auto_edit --skip-trust -m m1 --resume <uuid> -p continue',
    'resume headless autonomous':
      'gemini --output-format stream-json --approval-mode yolo --skip-trust --resume <uuid> -p continue',
    'resume headless autonomous model':
      'gemini --output-format stream-json --approval-mode yolo --skip-trust -m m1 --resume <uuid> -p continue',
    'resume interactive readonly': 'gemini --approval-mode plan --skip-trust --resume <uuid>',
    'resume interactive readonly model': 'gemini --approval-mode plan --skip-trust -m m1 --resume <uuid>',
    'resume interactive supervised': 'gemini --approval-mode default --skip-trust --resume <uuid>',
    'resume interactive supervised model':
      'gemini --approval-mode default --skip-trust -m m1 --resume <uuid>',
    'resume interactive autonomous': 'gemini --approval-mode yolo --skip-trust --resume <uuid>',
    'resume interactive autonomous model': 'gemini --approval-mode yolo --skip-trust -m m1 --resume <uuid>',
    'resume headless supervised, no id':
      'gemini --output-format stream-json --approval-mode auto_edit --skip-trust --resume latest -p continue',
    'resume interactive supervised, no id': 'gemini --approval-mode default --skip-trust --resume latest',
  },
  codex: {
    // codex --help / codex exec --help / codex resume --help (codex-cli 0.171.0):
    // "Usage: codex [OPTIONS] [PROMPT]"; "exec  Run Codex non-interactively [aliases: e]"   → modes
    // "--json  Print events to stdout as JSONL" (exec)                       → headless, thread_id captured
    // "Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]"             → headless resume by id
    // "Usage: codex resume [OPTIONS] [SESSION_ID] [PROMPT]"                  → interactive resume by id
    // "--last  Continue the most recent session without showing the picker"  → resume, no id
    // "--include-non-interactive  Include non-interactive sessions in the resume picker and --last selection"
    //   (codex resume only; `codex exec resume` has no such flag)
    // "-s, --sandbox <SANDBOX_MODE>  … [possible values: read-only, workspace-write, danger-full-access]"
    //   → readonly, supervised (exec only; `codex exec resume` has no --sandbox, so it goes before `resume`)
    // "--dangerously-bypass-approvals-and-sandbox  Skip all confirmation prompts and execute commands without
    //   sandboxing."                                                          → autonomous
    // "-m, --model <MODEL>  Model the agent should use"                       → -m
    'start headless readonly': 'codex exec --sandbox read-only --json task',
    'start headless readonly model': 'codex exec --sandbox read-only -m m1 --json task',
    'start headless supervised': 'codex exec --sandbox workspace-write --json task',
    'start headless supervised model': 'codex exec --sandbox workspace-write -m m1 --json task',
    'start headless autonomous': 'codex exec --dangerously-bypass-approvals-and-sandbox --json task',
    'start headless autonomous model':
      'codex exec --dangerously-bypass-approvals-and-sandbox -m m1 --json task',
    'start interactive readonly': 'codex --sandbox read-only task',
    'start interactive readonly model': 'codex --sandbox read-only -m m1 task',
    'start interactive supervised': 'codex --sandbox workspace-write --ask-for-approval on-request task',
    'start interactive supervised model':
      'codex --sandbox workspace-write --ask-for-approval on-request -m m1 task',
    'start interactive autonomous': 'codex --dangerously-bypass-approvals-and-sandbox task',
    'start interactive autonomous model': 'codex --dangerously-bypass-approvals-and-sandbox -m m1 task',
    'resume headless readonly': 'codex exec --sandbox read-only --json resume <thread> continue',
    'resume headless readonly model': 'codex exec --sandbox read-only -m m1 --json resume <thread> continue',
    'resume headless supervised': 'codex exec --sandbox workspace-write --json resume <thread> continue',
    'resume headless supervised model':
      'codex exec --sandbox workspace-write -m m1 --json resume <thread> continue',
    'resume headless autonomous':
      'codex exec --dangerously-bypass-approvals-and-sandbox --json resume <thread> continue',
    'resume headless autonomous model':
      'codex exec --dangerously-bypass-approvals-and-sandbox -m m1 --json resume <thread> continue',
    'resume interactive readonly': 'codex --sandbox read-only resume <thread>',
    'resume interactive readonly model': 'codex --sandbox read-only -m m1 resume <thread>',
    'resume interactive supervised':
      'codex --sandbox workspace-write --ask-for-approval on-request resume <thread>',
    'resume interactive supervised model':
      'codex --sandbox workspace-write --ask-for-approval on-request -m m1 resume <thread>',
    'resume interactive autonomous': 'codex --dangerously-bypass-approvals-and-sandbox resume <thread>',
    'resume interactive autonomous model':
      'codex --dangerously-bypass-approvals-and-sandbox -m m1 resume <thread>',
    'resume headless supervised, no id': 'codex exec --sandbox workspace-write --json resume --last continue',
    'resume interactive supervised, no id':
      'codex --sandbox workspace-write --ask-for-approval on-request resume --last --include-non-interactive',
  },
  opencode: {
    // opencode --help / opencode run --help (opencode 1.18.33):
    // "opencode run [message..]  run opencode with a message"     → headless
    // "--prompt  prompt to use"                                    → interactive
    // "--format  format: default (formatted) or json (raw JSON events)" → headless, sessionID captured
    // "-s, --session  session id to continue"                      → resume by id
    // "-c, --continue  continue the last session"                  → resume, no id
    // "--agent  agent to use"                                      → readonly: the built-in "plan" agent
    // "--auto  auto-approve permissions that are not explicitly denied (dangerous!)" → autonomous
    // "-m, --model  model to use in the format of provider/model"  → -m
    'start headless readonly': 'opencode run --agent plan --format json task',
    'start headless readonly model': 'opencode run --agent plan -m m1 --format json task',
    'start headless supervised': 'opencode run --agent build --format json task',
    'start headless supervised model': 'opencode run --agent build -m m1 --format json task',
    'start headless autonomous': 'opencode run --auto --format json task',
    'start headless autonomous model': 'opencode run --auto -m m1 --format json task',
    'start interactive readonly': 'opencode --agent plan --prompt task',
    'start interactive readonly model': 'opencode --agent plan -m m1 --prompt task',
    'start interactive supervised': 'opencode --agent build --prompt task',
    'start interactive supervised model': 'opencode --agent build -m m1 --prompt task',
    'start interactive autonomous': 'opencode --auto --prompt task',
    'start interactive autonomous model': 'opencode --auto -m m1 --prompt task',
    'resume headless readonly': 'opencode run --agent plan --format json --session <ses> continue',
    'resume headless readonly model':
      'opencode run --agent plan -m m1 --format json --session <ses> continue',
    'resume headless supervised': 'opencode run --agent build --format json --session <ses> continue',
    'resume headless supervised model':
      'opencode run --agent build -m m1 --format json --session <ses> continue',
    'resume headless autonomous': 'opencode run --auto --format json --session <ses> continue',
    'resume headless autonomous model': 'opencode run --auto -m m1 --format json --session <ses> continue',
    'resume interactive readonly': 'opencode --agent plan --session <ses>',
    'resume interactive readonly model': 'opencode --agent plan -m m1 --session <ses>',
    'resume interactive supervised': 'opencode --agent build --session <ses>',
    'resume interactive supervised model': 'opencode --agent build -m m1 --session <ses>',
    'resume interactive autonomous': 'opencode --auto --session <ses>',
    'resume interactive autonomous model': 'opencode --auto -m m1 --session <ses>',
  },
  agy: {
    // agy: not installable here, so these flags are UNVERIFIED (docs/providers.md); `harness doctor` compares
    // them with `agy --help` where agy is installed.
    'start headless readonly': 'agy --mode plan -p task',
    'start headless readonly model': 'agy --mode plan --model m1 -p task',
    'start headless supervised': 'agy -p task',
    'start headless supervised model': 'agy --model m1 -p task',
    'start headless autonomous': 'agy --dangerously-skip-permissions -p task',
    'start headless autonomous model': 'agy --dangerously-skip-permissions --model m1 -p task',
    'start interactive readonly': 'agy --mode plan -i task',
    'start interactive readonly model': 'agy --mode plan --model m1 -i task',
    'start interactive supervised': 'agy -i task',
    'start interactive supervised model': 'agy --model m1 -i task',
    'start interactive autonomous': 'agy --dangerously-skip-permissions -i task',
    'start interactive autonomous model': 'agy --dangerously-skip-permissions --model m1 -i task',
    'resume headless readonly': 'agy --mode plan --continue -p continue',
    'resume headless readonly model': 'agy --mode plan --model m1 --continue -p continue',
    'resume headless supervised': 'agy --continue -p continue',
    'resume headless supervised model': 'agy --model m1 --continue -p continue',
    'resume headless autonomous': 'agy --dangerously-skip-permissions --continue -p continue',
    'resume headless autonomous model':
      'agy --dangerously-skip-permissions --model m1 --continue -p continue',
    'resume interactive readonly': 'agy --mode plan --continue',
    'resume interactive readonly model': 'agy --mode plan --model m1 --continue',
    'resume interactive supervised': 'agy --continue',
    'resume interactive supervised model': 'agy --model m1 --continue',
    'resume interactive autonomous': 'agy --dangerously-skip-permissions --continue',
    'resume interactive autonomous model': 'agy --dangerously-skip-permissions --model m1 --continue',
  },
  'pi-agent': {
    // pi --help (pi-coding-agent 0.73.1):
    // "pi [options] [@files...] [messages...]"                       → the prompt is positional
    // "--print, -p  Non-interactive mode: process prompt and exit"   → headless
    // "--mode <mode>  Output mode: text (default), json, or rpc"     → headless events (exit 0 on a failed
    //   request: harness reads the agent_end event)
    // "--session <path|id>  Use specific session file or partial UUID" → start and resume: the file harness owns
    //   (pi creates it; "--continue, -c  Continue previous session" would take the folder's latest)
    // "--tools, -t <tools>  Comma-separated allowlist of tool names to enable"; example:
    //   "# Read-only mode (no file modifications possible)  pi --tools read,grep,find,ls -p …" → readonly
    // pi has no permission prompts: supervised and autonomous add nothing.
    // "--model <pattern>  Model pattern or ID (supports "provider/id" and optional ":<thinking>")" → -m
    'start headless readonly': 'pi -p --mode json --tools read,grep,find,ls --session <dir>/pi.jsonl task',
    'start headless readonly model':
      'pi -p --mode json --tools read,grep,find,ls --model m1 --session <dir>/pi.jsonl task',
    'start headless supervised': 'pi -p --mode json --session <dir>/pi.jsonl task',
    'start headless supervised model': 'pi -p --mode json --model m1 --session <dir>/pi.jsonl task',
    'start headless autonomous': 'pi -p --mode json --session <dir>/pi.jsonl task',
    'start headless autonomous model': 'pi -p --mode json --model m1 --session <dir>/pi.jsonl task',
    'start interactive readonly': 'pi --tools read,grep,find,ls --session <dir>/pi.jsonl task',
    'start interactive readonly model':
      'pi --tools read,grep,find,ls --model m1 --session <dir>/pi.jsonl task',
    'start interactive supervised': 'pi --session <dir>/pi.jsonl task',
    'start interactive supervised model': 'pi --model m1 --session <dir>/pi.jsonl task',
    'start interactive autonomous': 'pi --session <dir>/pi.jsonl task',
    'start interactive autonomous model': 'pi --model m1 --session <dir>/pi.jsonl task',
    'resume headless readonly':
      'pi -p --mode json --tools read,grep,find,ls --session <dir>/pi.jsonl continue',
    'resume headless readonly model':
      'pi -p --mode json --tools read,grep,find,ls --model m1 --session <dir>/pi.jsonl continue',
    'resume headless supervised': 'pi -p --mode json --session <dir>/pi.jsonl continue',
    'resume headless supervised model': 'pi -p --mode json --model m1 --session <dir>/pi.jsonl continue',
    'resume headless autonomous': 'pi -p --mode json --session <dir>/pi.jsonl continue',
    'resume headless autonomous model': 'pi -p --mode json --model m1 --session <dir>/pi.jsonl continue',
    'resume interactive readonly': 'pi --tools read,grep,find,ls --session <dir>/pi.jsonl',
    'resume interactive readonly model': 'pi --tools read,grep,find,ls --model m1 --session <dir>/pi.jsonl',
    'resume interactive supervised': 'pi --session <dir>/pi.jsonl',
    'resume interactive supervised model': 'pi --model m1 --session <dir>/pi.jsonl',
    'resume interactive autonomous': 'pi --session <dir>/pi.jsonl',
    'resume interactive autonomous model': 'pi --model m1 --session <dir>/pi.jsonl',
  },
  aider: {
    // aider --help (aider-chat 0.86, from its documented options):
    // "--message COMMAND, --msg COMMAND, -m COMMAND  Specify a single message to send the LLM, process reply
    //   then exit (disables chat mode)"        → headless only; interactive starts the chat without it
    // "--chat-history-file CHAT_HISTORY_FILE  Specify the chat history file (default: .aider.chat.history.md)"
    //   → one per session, under .harness/agents/<id>/
    // "--restore-chat-history  Restore the previous chat history messages (default: False)" → resume
    // "--yes-always  Always say yes to every confirmation"  → autonomous; aider has no read-only mode
    // "--model MODEL  Specify the model to use for the main chat" → -m
    'start headless supervised': 'aider --chat-history-file <dir>/aider.chat.md --message task',
    'start headless supervised model':
      'aider --model m1 --chat-history-file <dir>/aider.chat.md --message task',
    'start headless autonomous': 'aider --yes-always --chat-history-file <dir>/aider.chat.md --message task',
    'start headless autonomous model':
      'aider --yes-always --model m1 --chat-history-file <dir>/aider.chat.md --message task',
    'start interactive supervised': 'aider --chat-history-file <dir>/aider.chat.md',
    'start interactive supervised model': 'aider --model m1 --chat-history-file <dir>/aider.chat.md',
    'start interactive autonomous': 'aider --yes-always --chat-history-file <dir>/aider.chat.md',
    'start interactive autonomous model':
      'aider --yes-always --model m1 --chat-history-file <dir>/aider.chat.md',
    'resume headless supervised':
      'aider --chat-history-file <dir>/aider.chat.md --restore-chat-history --message continue',
    'resume headless supervised model':
      'aider --model m1 --chat-history-file <dir>/aider.chat.md --restore-chat-history --message continue',
    'resume headless autonomous':
      'aider --yes-always --chat-history-file <dir>/aider.chat.md --restore-chat-history --message continue',
    'resume headless autonomous model':
      'aider --yes-always --model m1 --chat-history-file <dir>/aider.chat.md --restore-chat-history --message continue',
    'resume interactive supervised': 'aider --chat-history-file <dir>/aider.chat.md --restore-chat-history',
    'resume interactive supervised model':
      'aider --model m1 --chat-history-file <dir>/aider.chat.md --restore-chat-history',
    'resume interactive autonomous':
      'aider --yes-always --chat-history-file <dir>/aider.chat.md --restore-chat-history',
    'resume interactive autonomous model':
      'aider --yes-always --model m1 --chat-history-file <dir>/aider.chat.md --restore-chat-history',
  },
}

const UUID = '0b6f7c3e-5d2a-4f7e-9c1b-2a3d4e5f6a7b'
const AGENT_DIR = '/home/user/project/.harness/agents/3f9a12c8'
const AGENT_IDS: Record<string, string> = {
  claude: UUID,
  gemini: UUID,
  codex: '019a-thread-7f3a',
  opencode: 'ses_42ab',
}

function expand(argv: string): string[] {
  return argv.split(' ').map((token) =>
    token
      .replace('<uuid>', UUID)
      .replace('<thread>', AGENT_IDS.codex ?? '')
      .replace('<ses>', AGENT_IDS.opencode ?? '')
      .replace('<dir>', AGENT_DIR),
  )
}

function inputFor(name: string, key: string): Omit<AgentInvocationInput, 'provider'> {
  const [kind, mode, level] = key.replace(',', '').split(' ') as [
    'start' | 'resume',
    'headless' | 'interactive',
    Permission,
  ]
  const noId = key.endsWith('no id')
  return {
    kind,
    mode,
    permission: level,
    model: key.includes(' model') ? 'm1' : undefined,
    prompt: kind === 'start' ? 'task' : undefined,
    agentSessionId:
      noId || (kind === 'start' && name !== 'claude' && name !== 'gemini') ? undefined : AGENT_IDS[name],
    agentDir: AGENT_DIR,
  }
}

describe('a resume that could not be exact is refused', () => {
  test('opencode without its session id: exit 4 with a hint, never --continue', () => {
    for (const mode of ['headless', 'interactive'] as const) {
      let error: unknown
      try {
        buildAgentInvocation({ provider: resolveProvider('opencode'), kind: 'resume', mode })
      } catch (caught) {
        error = caught
      }
      expect(error).toMatchObject({ exitCode: ExitCode.IllegalState, code: 'RESUME_NOT_EXACT' })
      expect((error as { hint?: string }).hint).toContain('opencode session list')
    }
  })
})

describe('a prompt that begins with "-"', () => {
  test('reaches pi as a message (pi has no `--`: a leading space), and others after `--`', () => {
    const pi = buildAgentInvocation({
      provider: resolveProvider('pi-agent'),
      kind: 'start',
      mode: 'headless',
      prompt: '-v crashes',
      agentDir: AGENT_DIR,
    })
    expect(pi.args).toEqual(['-p', '--mode', 'json', '--session', `${AGENT_DIR}/pi.jsonl`, ' -v crashes'])
    expect(pi.args).not.toContain('--')
    const claude = buildAgentInvocation({
      provider: resolveProvider('claude'),
      kind: 'start',
      mode: 'interactive',
      prompt: '-v crashes',
      agentSessionId: UUID,
    })
    expect(claude.args.slice(-2)).toEqual(['--', '-v crashes'])
  })
})

describe('the argv of every built-in provider, in every mode and level', () => {
  for (const [name, table] of Object.entries(ARGV)) {
    describe(name, () => {
      for (const [key, argv] of Object.entries(table)) {
        test(key, () => {
          const { command, args } = buildAgentInvocation({
            provider: resolveProvider(name),
            ...inputFor(name, key),
          })
          expect([command, ...args]).toEqual(expand(argv))
        })
      }
      test('the table covers every level the provider has, both kinds, both modes, with and without a model', () => {
        const provider = resolveProvider(name)
        const levels = PERMISSIONS.filter((level) => provider.permission[level] !== null)
        for (const kind of ['start', 'resume'])
          for (const mode of ['headless', 'interactive'])
            for (const level of levels)
              for (const model of ['', ' model'])
                expect(table).toHaveProperty([`${kind} ${mode} ${level}${model}`])
      })
    })
  }
})

describe('levels a provider does not have', () => {
  test('aider has no readonly level: a usage error naming the levels it has', () => {
    const provider = resolveProvider('aider')
    let error: unknown
    try {
      buildAgentInvocation({ provider, mode: 'headless', kind: 'start', prompt: 'x', permission: 'readonly' })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(UsageError)
    expect((error as UsageError).exitCode).toBe(ExitCode.Usage)
    expect((error as UsageError).message).toBe(
      'provider "aider" has no readonly level; it has: supervised, autonomous',
    )
  })

  test('every other built-in has all three levels', () => {
    for (const name of Object.keys(ARGV).filter((n) => n !== 'aider')) {
      const provider = resolveProvider(name)
      for (const level of PERMISSIONS) expect(provider.permission[level], `${name} ${level}`).not.toBeNull()
    }
  })
})
