import { join, resolve } from 'node:path'
import { checkpointIntervalMs, worktreeRoot, worktreeSetupCommand } from '../../config.js'
import { UsageError } from '../../errors.js'
import { inspectRepo } from '../../git/repo.js'
import { resolveCommit } from '../../git/worktree.js'
import type { Permission } from '../../providers/schema.js'
import type { SessionEnv } from '../ports.js'
import { contextMaxBytes } from './context.js'
import { planWorkspace } from './plan.js'
import { checkStartOptions, prepareStart, type StartOptions } from './prepare.js'
import type { RunPlan } from './runner.js'

/** What `run --dry-run` prints: what would run, where, with what; nothing of it exists. */
export interface RunDryRun {
  dry_run: true
  /** The id the session would get (a generated one is not reserved). */
  id: string
  /** `--name`, free now (not reserved either). */
  name: string | null
  agent: string
  permission: Permission
  model: string | null
  mode: RunPlan['mode']
  tmux: boolean
  command: string
  args: string[]
  /** Where the agent would start. */
  cwd: string
  /** The prompt the agent would get, the context block included. */
  prompt: string | null
  /** `--budget` in USD, or null. */
  budget_usd: number | null
  context_from: string[]
  /** The worktree that would be made, null when the run would use the current directory. */
  worktree: string | null
  branch: string | null
  base_commit: string | null
  config: {
    checkpoint_interval_ms: number
    context_max_bytes: number
    /** `worktree.setup` as it would run (argv) in the new worktree. */
    worktree_setup: string[] | null
  }
}

/**
 * `harness run --dry-run`: decides everything a run would (agent, argv, prompt with its context block,
 * worktree, branch, base) and makes nothing: no record, no worktree, no branch, no .harness folder.
 */
export async function dryRunSession(ctx: SessionEnv, options: StartOptions): Promise<RunDryRun> {
  checkStartOptions(options)
  const paths = await ctx.project()
  const store = await ctx.store()
  if (options.sessionId && store.exists(options.sessionId)) {
    throw new UsageError(
      `session "${options.sessionId}" exists: --dry-run only shows new sessions`,
      'choose a new --session-id',
    )
  }
  if (options.restoreCheckpoint !== undefined) {
    throw new UsageError('--restore-checkpoint needs --session-id of an existing session')
  }
  const prepared = await prepareStart(ctx, paths, store, options)
  const { config, id } = prepared
  const repo = await inspectRepo(ctx.cwd, { env: ctx.env })
  const workspace = planWorkspace(options, repo, ctx.cwd, id, worktreeRoot(config, paths.root))
  let worktree: string | null = null
  let branch: string | null = null
  let baseCommit = workspace.baseCommit
  let cwd = resolve(ctx.cwd)
  if (workspace.kind === 'worktree') {
    baseCommit ??= await resolveCommit(workspace.repoDir, workspace.base, { env: ctx.env })
    worktree = workspace.dir
    branch = workspace.branch
    cwd = join(worktree, workspace.subdir ?? '')
  }
  return {
    dry_run: true,
    id,
    name: options.name ?? null,
    agent: prepared.provider.name,
    permission: prepared.permission,
    model: prepared.model ?? null,
    mode: prepared.mode,
    tmux: prepared.tmux,
    command: prepared.invocation.command,
    args: prepared.invocation.args,
    cwd,
    prompt: prepared.agentPrompt ?? null,
    budget_usd: prepared.budget?.limit_usd ?? null,
    context_from: prepared.contextFrom,
    worktree,
    branch,
    base_commit: baseCommit,
    config: {
      checkpoint_interval_ms: checkpointIntervalMs(config),
      context_max_bytes: contextMaxBytes(config),
      worktree_setup: setupArgv(worktreeSetupCommand(config)),
    },
  }
}

function setupArgv(setup: { command: string; args: string[] } | null): string[] | null {
  return setup ? [setup.command, ...setup.args] : null
}
