import { join, resolve } from 'node:path'
import { checkpointIntervalMs, type HarnessConfig, type ModelPricing } from '../../config.js'
import { statOrNull } from '../../disk/door.js'
import type { ProjectPaths } from '../../project.js'
import type { ResolvedProvider } from '../../providers/args.js'
import { costSourceOf, type RunBudget } from '../budget.js'
import type { SessionEnv } from '../ports.js'
import type { SessionRecord } from '../record/schema.js'
import type { RunPlan } from './runner.js'

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
