import { ExitCode, ExitRequest, UsageError } from '../../errors.js'
import { type ResolvedProvider, refusalAsRoot, takesPrompt } from '../../providers/args.js'
import type { Permission } from '../../providers/schema.js'
import type { SessionEnv } from '../ports.js'
import { computeLiveness } from '../record/liveness.js'
import { signalExitCode, TIMEOUT_EXIT_CODE } from '../record/outcome.js'
import type { Run, SessionRecord } from '../record/schema.js'
import { type RunPlan, type RunResult, runInBackground, runInForeground } from './runner.js'

export interface RunOutcome {
  record: SessionRecord
  /** Foreground runs: how harness must exit (the agent's code, or its signal re-raised). */
  exit?: ExitRequest
}

/** Runs the plan where its mode says; `begin` puts the run on record once the agent is about to start. */
export async function launch(
  ctx: SessionEnv,
  plan: RunPlan,
  begin: (run: Run) => Promise<SessionRecord>,
): Promise<RunOutcome> {
  if (plan.mode === 'background' || plan.tmux) {
    const { localHost, tmuxHost } = await import('../../process/host.js')
    const host = plan.tmux ? tmuxHost({ ...plan.tmux, cwd: plan.cwd }) : localHost
    // Like every RUNNING record shown, it carries its computed liveness.
    const record = await runInBackground(plan, begin, ctx.env, host)
    const liveness = computeLiveness(record)
    return { record: liveness ? { ...record, liveness } : record }
  }
  const result = await runInForeground(plan, begin, ctx.agentOutput)
  return { record: result.record, exit: foregroundExit(result) }
}

/** A foreground run names its session before the agent takes over, for `session path`/`logs` elsewhere. */
export function announce(ctx: SessionEnv, record: SessionRecord, mode: RunPlan['mode']): void {
  if (mode === 'background') return
  const branch = record.git_branch ? ` (branch ${record.git_branch})` : ' (no worktree)'
  ctx.notice(`harness: session ${record.id} in ${record.worktree_dir}${branch}`)
}

/** A level the CLI refuses for this user (claude's autonomous as root) is refused here, before anything starts. */
export function assertAllowedAsUser(
  provider: ResolvedProvider,
  permission: Permission,
  env: Readonly<Record<string, string | undefined>>,
): void {
  const refusal = refusalAsRoot(provider, permission, process.getuid?.(), env)
  if (!refusal) return
  const exempt = Object.entries(provider.refused_as_root?.unless_env ?? {})
    .map(([name, value]) => `${name}=${value}`)
    .join(' or ')
  throw new UsageError(
    refusal,
    `run harness as another user or choose -P readonly or supervised${exempt ? ` (in a sandbox, ${exempt} lets it run)` : ''}`,
    'REFUSED_AS_ROOT',
  )
}

/** aider's chat takes no first message (`--message` would reply once and exit): the user pastes it. */
export function showPromptToPaste(
  ctx: SessionEnv,
  provider: ResolvedProvider,
  mode: RunPlan['mode'],
  prompt: string | undefined,
): void {
  if (mode !== 'interactive' || !prompt || takesPrompt(provider, 'interactive')) return
  // Control characters would act on the terminal; they are shown as "?".
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const shown = prompt.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?')
  ctx.notice(`harness: ${provider.name} starts without your prompt; paste it into the chat:\n${shown}`)
}

/**
 * What a foreground run exits with: the agent's code; 128+n for a signal; and when the agent died from
 * SIGINT/SIGQUIT, the same signal re-raised on harness (so a calling shell loop stops too). A run paused by
 * what harness received exits as SPEC §8 says: 130 for Ctrl-C (SIGINT re-raised), 129 for a hang-up, 143 for
 * SIGTERM, 124 for `--timeout`, 6 for the budget.
 */
export function foregroundExit(result: RunResult): ExitRequest {
  const exit = result.exit
  if (!exit) return new ExitRequest(0)
  if (exit.spawnError) return new ExitRequest(5)
  const { record } = result
  // Stopped at its budget (by harness, or by the agent's own limit): PAUSED, resumable with a larger one.
  if (record.stop_reason === 'budget') return new ExitRequest(ExitCode.BudgetReached)
  if (record.status === 'PAUSED' && record.stop_reason === 'timeout')
    return new ExitRequest(TIMEOUT_EXIT_CODE)
  // Told to stop before the agent existed: die of that signal, as an abort during the worktree set-up does.
  if (exit.notStarted) {
    const signal = exit.stopSignal ?? 'SIGTERM'
    return new ExitRequest(signalExitCode(signal) ?? 143, signal)
  }
  const interrupted = record.status === 'PAUSED' && typeof record.exit_code === 'number'
  if (interrupted && record.stop_reason === 'interrupt')
    return new ExitRequest(record.exit_code ?? 130, 'SIGINT')
  if (interrupted) return new ExitRequest(record.exit_code ?? 1)
  if (exit.signal === 'SIGINT' || exit.signal === 'SIGQUIT') {
    return new ExitRequest(signalExitCode(exit.signal) ?? 130, exit.signal)
  }
  if (exit.signal) return new ExitRequest(signalExitCode(exit.signal) ?? 1)
  // The agent exited 0 but reported a failure (pi --mode json), or its work could not be brought back (a
  // container run's commits, kept for the next resume): the recorded exit code says so.
  const failedAfterAll = ['agent-error', 'collect-failed'].includes(record.stop_reason ?? '')
  if (exit.exitCode === 0 && failedAfterAll) return new ExitRequest(1)
  return new ExitRequest(exit.exitCode ?? 1)
}
