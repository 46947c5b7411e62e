import type { HarnessConfig } from '../../config.js'
import { ExitCode, ExitRequest, UsageError } from '../../errors.js'
import type { ProjectPaths } from '../../project.js'
import { type ResolvedProvider, refusalAsRoot, takesPrompt } from '../../providers/args.js'
import type { Permission } from '../../providers/schema.js'
import type { PreparedRun, RunRequest, SessionBackend, StartIo } from '../backends/backend.js'
import { actEnvOf } from '../control/settle.js'
import type { SessionEnv } from '../ports.js'
import { seen } from '../query/query.js'
import { reconcileView } from '../query/reconcile.js'
import { agentDirFor } from '../record/agent-files.js'
import { signalExitCode, TIMEOUT_EXIT_CODE } from '../record/outcome.js'
import type { Run, SessionRecord } from '../record/schema.js'
import { type RunPlan, type RunResult, runInBackground, runInForeground } from './runner.js'

export interface RunOutcome {
  record: SessionRecord
  /** Foreground runs: how harness must exit (the agent's code, or its signal re-raised). */
  exit?: ExitRequest
}

/**
 * Starts a planned run on its backend (SPEC §14 "The seam"): the backend prepared its part of the workspace,
 * and now starts the agent, committing the run through `begin` (with the fields its facts add). A backend whose
 * agent a local process waits on is lent a supervisor here (foreground, detached, tmux); one whose engine
 * supervises commits the run itself.
 */
export async function launch(
  ctx: SessionEnv,
  start: { backend: SessionBackend; request: RunRequest; prepared: PreparedRun; plan: RunPlan },
  begin: (run: Run, fields: Partial<SessionRecord>) => Promise<SessionRecord>,
): Promise<RunOutcome> {
  const { backend, request, prepared, plan } = start
  const io: StartIo = {
    async supervise(command, host) {
      const supervised = { ...plan, command: command.command, args: command.args }
      const commit = (run: Run) => begin(run, {})
      if (host) return { record: await runInBackground(supervised, commit, ctx.env, host) }
      return runInForeground(supervised, commit, ctx.agentOutput)
    },
    commit: begin,
    output: ctx.agentOutput,
    act: async () => {
      return actEnvOf(ctx)
    },
  }
  const started = await backend.start(request, prepared, io)
  if (started.exit)
    return { record: started.record, exit: foregroundExit({ ...started, exit: started.exit }) }
  // Like every RUNNING record shown, it carries its computed liveness (nothing written: a dry look).
  if (started.record.status !== 'RUNNING') return { record: started.record }
  const store = await ctx.store()
  return { record: await reconcileView(store, started.record, true, ...seen(ctx)) }
}

/** One planned run as its backend gets it. */
export function runRequest(
  plan: RunPlan,
  session: SessionRecord,
  paths: ProjectPaths,
  config: HarnessConfig,
  flags: RunRequest['flags'] = {},
): RunRequest {
  return {
    id: plan.id,
    runN: plan.runN,
    kind: plan.kind,
    command: plan.command,
    args: plan.args,
    cwd: plan.cwd,
    mode: plan.mode,
    tmux: plan.tmux ?? null,
    env: plan.env,
    harnessDir: paths.harnessDir,
    agentDir: agentDirFor(paths.harnessDir, plan.id),
    worktreeDir: session.worktree_dir,
    repo:
      session.is_worktree && session.git_branch
        ? { dir: session.base_dir ?? paths.root, branch: session.git_branch }
        : null,
    session,
    timeoutMs: plan.timeoutMs ?? null,
    config,
    flags,
  }
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
function foregroundExit(result: RunResult): ExitRequest {
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
