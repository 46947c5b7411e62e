import { BACKEND_NAMES } from '../backend-names.js'
import { action } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { boolFlag, choiceFlag, type FlagValues, listFlag, negatedFlag, textFlag } from '../cli/options.js'
import { UsageError } from '../errors.js'

const PERMISSIONS = ['readonly', 'supervised', 'autonomous'] as const

/** `-P, --permission <mode>`, as run and chain add declare it. */
export function permissionFlag(description: string) {
  return choiceFlag('-P, --permission <mode>', description, PERMISSIONS)
}

const RUN_FLAGS = {
  agent: textFlag(
    '-a, --agent <name>',
    'claude, codex, gemini, opencode, agy, pi-agent, aider, exec, or one from config',
    { values: 'agents' },
  ),
  model: textFlag('-m, --model <model>', "passed through the agent's own model flag"),
  permission: permissionFlag('readonly | supervised | autonomous (default: supervised)'),
  worktree: negatedFlag('--no-worktree', 'run in the current directory instead of a new worktree'),
  base: textFlag('--base <ref>', 'start the worktree from this commit or branch (default: HEAD)'),
  branch: textFlag('--branch <name>', 'branch name for the worktree (default: harness/<id>)'),
  sessionId: textFlag(
    '--session-id <id>',
    'use this exact id; resumes the session if it already exists (never a prefix or a name)',
    { values: 'session-ids' },
  ),
  name: textFlag(
    '--name <name>',
    'a name unique in the project, accepted wherever an id is (hcd, show, resume, ...)',
  ),
  detach: boolFlag('-d, --detach', 'run in the background; return once the agent has started'),
  tmux: boolFlag('--tmux', 'run the interactive agent in its own tmux session; return once it has started'),
  attach: boolFlag('--attach', 'with --tmux: attach to it at once (detach: Ctrl-b, then d)'),
  prompt: textFlag('--prompt <text>', 'the prompt, for one that begins with "-" (--prompt="-v crashes")'),
  restoreCheckpoint: textFlag(
    '--restore-checkpoint <n>',
    'with --session-id of an existing session: restore checkpoint <n> first',
  ),
  contextFrom: listFlag(
    '--context-from <id>',
    "put an earlier session's task, outcome, changes and final message before the prompt (repeatable)",
    { values: 'sessions' },
  ),
  budget: textFlag(
    '--budget <usd>',
    'the most the session may cost, all runs together (e.g. 1.00): paused once reached (exit 6)',
  ),
  timeout: textFlag(
    '--timeout <duration>',
    'the most this run may take (90s, 30m, 2h, 30d; a bare number is seconds): paused then (exit 124)',
  ),
  dryRun: boolFlag(
    '--dry-run',
    'print the argv, prompt, worktree and branch that would be used; start nothing',
  ),
  backend: choiceFlag(
    '--backend <name>',
    `where the agent runs: ${BACKEND_NAMES.join(' | ')} (default: config backend, else local)`,
    BACKEND_NAMES,
  ),
  image: textFlag('--image <image>', 'with --backend container: the image (it must contain the agent CLI)'),
  engine: choiceFlag(
    '--engine <name>',
    'with --backend container: podman | docker (default: the first found)',
    ['podman', 'docker'],
  ),
}

const RUN_HELP = `
Without a prompt, one piped on stdin is read ("-" as the prompt reads stdin too);
an agent that runs headless needs one.
With a terminal the run is interactive; without one (CI, pipes) it is headless:
the agent's output goes to .harness/logs/<id>.log and to stdout (to stderr under
--json, where stdout is the final record).
Exit status: in the foreground, the agent's exit code (128+n if a signal ended
it), 6 when --budget was reached, 124 when --timeout ran out; interrupted runs
are PAUSED (130 Ctrl-C, 129 hang-up, 143 SIGTERM); with --detach, 0 once the
agent has started (stdout: the id, or the record under --json).

Examples:
  harness run -a claude "add auth endpoints"    # interactive in a terminal
  harness run -a codex -P autonomous --detach "fix lint"
  id=$(harness run -a claude --detach --json "fix lint" | jq -r .id)
  harness run -a exec -- npm test               # any command as a session
  echo "fix the tests" | harness run -a claude  # the prompt from stdin (or "-")
  harness run --tmux -a claude "add tests"      # in tmux; then: harness session attach <id>
  harness run --context-from 3f9a "now add the tests for it"
  harness run --dry-run -a codex --context-from 3f9a "review it"   # see argv and prompt
  harness run -a claude --detach --budget 1.00 "add tests"   # then: resume <id> --budget 2.00
  harness run -a codex --detach --timeout 2h "fix lint"      # PAUSED after 2 h; resume goes on
  harness run --name auth -a claude "add auth endpoints"   # then: hcd auth, harness session show auth`

export function registerRun(program: CliCommand, ctx: Context): void {
  program
    .command('run [prompt...]')
    .alias('chat')
    .description('start an agent as a new session in its own worktree (args after -- go to the agent)')
    .flags(RUN_FLAGS)
    .addHelpText('after', RUN_HELP)
    .action(action(RUN_FLAGS, (options, words: string[]) => run(ctx, options, words)))
}

async function run(ctx: Context, options: FlagValues<typeof RUN_FLAGS>, words: string[]): Promise<void> {
  const prompt = promptWords(options.prompt, words)
  const { parseBudget } = (await ctx.services.run()).budget
  const budget = options.budget === undefined ? undefined : parseBudget(options.budget)
  const { runTimeoutFlag } = (await ctx.services.run()).duration
  const timeoutMs = runTimeoutFlag(options.timeout)
  const explicitStdin = prompt.length === 1 && prompt[0] === '-'
  // At most what a prompt may be (sessions/record/bounds.ts): a longer one is refused before anything is made.
  const { PROMPT_MAX_BYTES } = (await ctx.services.run()).bounds
  const fromStdin = () => ctx.readStdin(PROMPT_MAX_BYTES, 'the prompt on stdin')
  const start = {
    ...options,
    detach: options.detach === true,
    tmux: options.attach || options.tmux,
    prompt: explicitStdin ? [await fromStdin()] : prompt,
    budget,
    timeoutMs,
    extraArgs: ctx.passthrough,
    promptFromStdin: ctx.stdinIsTerminal ? undefined : fromStdin,
  }
  if (options.dryRun) {
    const { dryRunSession } = (await ctx.services.run()).start
    const { renderRunDryRun } = (await ctx.services.run()).renderRun
    ctx.out.result(await dryRunSession(ctx, start), renderRunDryRun)
    return
  }
  const { startSession } = (await ctx.services.run()).start
  const { renderDetachedRun, resumeSummary, runSummary } = (await ctx.services.run()).renderRun
  const outcome = await startSession(ctx, start)
  if (outcome.exit && !ctx.options.json) ctx.out.info(runSummary(outcome.record))
  else ctx.out.result(outcome.record, renderDetachedRun)
  // --session-id of an existing session resumed it: the same summary as `session resume`.
  if (outcome.exit && outcome.record.runs?.at(-1)?.kind === 'resume') {
    ctx.out.info(resumeSummary(outcome.record, new Date(ctx.clock.now())))
  }
  if (!outcome.exit) ctx.out.info(runSummary(outcome.record))
  if (outcome.exit) throw outcome.exit
  if (options.attach) await attachAfterStart(ctx, outcome.record.id)
}

/** `--attach`: the session runs (and its id is printed); now show it in this terminal. */
export async function attachAfterStart(ctx: Context, id: string): Promise<void> {
  const { attachSession } = (await ctx.services.run()).attach
  await attachSession(ctx, id)
}

/** The prompt from --prompt or from the positional words, not both. */
export function promptWords(flag: string | undefined, words: string[]): string[] {
  if (flag === undefined) return words
  if (words.length) throw new UsageError('give the prompt either as words or with --prompt, not both')
  return [flag]
}
