import { join, resolve } from 'node:path'
import { checkpointIntervalMs, type HarnessConfig, type ModelPricing } from '../../config.js'
import { statOrNull } from '../../disk/door.js'
import type { AgentLaunch } from '../../process/supervisor.js'
import type { ProjectPaths } from '../../project.js'
import type { ResolvedProvider } from '../../providers/args.js'
import type { HeadlessOutput } from '../../providers/schema.js'
import type { RunSettlement } from '../backends/backend.js'
import { costSourceOf, type RunBudget } from '../budget.js'
import type { SessionEnv } from '../ports.js'
import type { SessionRecord } from '../record/schema.js'

export const DEFAULT_GRACE_MS = 1500

/** Everything a supervisor needs to run one run of one session; also what the detached one receives. */
export interface RunPlan {
  sessionsDir: string
  logsDir: string
  id: string
  runN: number
  /** A resume of a record that has no runs (written by an older tool) is still a resume, though it is run 1. */
  kind: 'start' | 'resume'
  command: string
  args: string[]
  cwd: string
  env: NodeJS.ProcessEnv
  mode: AgentLaunch['mode']
  /** The provider prints its own session id in its output (codex `thread_id`, opencode `sessionID`). */
  sessionIdCapture?: { key: string; args: string[] } | null
  /** The event stream of its headless output, read for failures its exit code hides (pi). */
  headlessOutput?: HeadlessOutput | null
  /** A worktree and the commit it started from: `files_modified` is recorded against it when the run ends. */
  changesAgainst?: { dir: string; base: string } | null
  /** The provider's name: how its screen shows its state (tmux runs). */
  provider?: string
  /** `hooks.on_status` from trusted config, run by the supervisor on the changes it makes. */
  onStatus?: string[] | null
  /** A run hosted in tmux: its server and session (docs/tmux.md). */
  tmux?: { socket: string; session: string } | null
  /** The launcher's environment: the supervisor's git, hooks and record seals use it (tmux gives its own). */
  supervisorEnv?: NodeJS.ProcessEnv
  /** Checkpoints at the end of the run and every `intervalMs` (0: only at the end); absent outside git. */
  checkpoints?: { intervalMs: number } | null
  /** The session's budget: the agent is stopped (as by pause) once the cost its output reports reaches it. */
  budget?: RunBudget | null
  /** config `pricing.<model>`: the price of tokens for an agent that reports no cost (docs/budgets.md). */
  pricing?: ModelPricing | null
  /** A run that is not a plain process (a container): what ends it once the spawned client is gone. */
  settle?: RunSettlement | null
  /** `--timeout`: the most this run may take, in ms, from its start; then it is stopped as by pause. */
  timeoutMs?: number | null
}

/** What one run of a session is made of, for `runPlan`. */
export interface RunPlanOptions {
  paths: ProjectPaths
  session: SessionRecord
  /** The run's number (1 for the start). */
  runN: number
  kind: RunPlan['kind']
  invocation: { command: string; args: string[] }
  mode: RunPlan['mode']
  provider: ResolvedProvider
  config: HarnessConfig
  tmux: { socket: string; session: string } | null
  budget: RunBudget | null
  /** config `pricing.<model>`, used only for an agent that reports tokens but no cost. */
  pricing: ModelPricing | null
  /** `--timeout` of this run, in ms. */
  timeoutMs?: number
}

/** One run of a session, for whichever supervisor runs it. */
export function runPlan(ctx: SessionEnv, options: RunPlanOptions): RunPlan {
  const { paths, session, provider, config, tmux } = options
  const subdir = typeof session.start_subdir === 'string' ? session.start_subdir : null
  return {
    sessionsDir: paths.sessionsDir,
    logsDir: paths.logsDir,
    id: session.id,
    runN: options.runN,
    kind: options.kind,
    command: options.invocation.command,
    args: options.invocation.args,
    cwd: startDir(session.worktree_dir, subdir),
    env: { ...ctx.env, HARNESS_SESSION_ID: session.id, HARNESS_DIR: paths.harnessDir },
    mode: options.mode,
    sessionIdCapture: provider.session_id_capture,
    headlessOutput: provider.headless_output,
    provider: provider.name,
    onStatus: config.hooks?.on_status ?? null,
    tmux,
    ...(tmux ? { supervisorEnv: ctx.env } : {}),
    changesAgainst:
      session.is_worktree && session.base_commit
        ? { dir: session.worktree_dir, base: session.base_commit }
        : null,
    checkpoints: session.base_commit ? { intervalMs: checkpointIntervalMs(config) } : null,
    budget: options.budget,
    // Only where the agent reports tokens but no cost: a reported cost is never replaced by an estimate.
    pricing: costSourceOf(provider.headless_output) === 'tokens' ? options.pricing : null,
    timeoutMs: options.timeoutMs ?? null,
  }
}

/** The worktree's counterpart of the directory the user ran harness from, if it exists there. */
function startDir(worktreeDir: string, subdir: string | null | undefined): string {
  if (!subdir) return worktreeDir
  let dir = join(worktreeDir, subdir)
  while (dir.length > worktreeDir.length) {
    if (isDir(dir)) return dir
    dir = resolve(dir, '..')
  }
  return worktreeDir
}

/** Whether `path` is a folder (a link to one counts). */
export function isDir(path: string): boolean {
  return statOrNull(path)?.isDirectory() ?? false
}
