import { join, resolve } from 'node:path'
import * as z from 'zod/mini'
import { BACKEND_NAMES, type BackendName } from '../../backend-names.js'
import {
  checkpointIntervalMs,
  type HarnessConfig,
  type ModelPricing,
  ModelPricingSchema,
} from '../../config.js'
import { statOrNull } from '../../disk/door.js'
import { UsageError } from '../../errors.js'
import type { ProjectPaths } from '../../project.js'
import type { ResolvedProvider } from '../../providers/args.js'
import { HEADLESS_OUTPUTS } from '../../providers/schema.js'
import { costSourceOf, type RunBudget } from '../budget.js'
import type { SessionEnv } from '../ports.js'
import { SESSION_ID_PATTERN } from '../record/ids.js'
import type { SessionRecord } from '../record/schema.js'

export const DEFAULT_GRACE_MS = 1500

/** An absolute path (the plan's folders). */
const PathSchema = z.string().check(z.regex(/^\//, 'an absolute path'))
const EnvSchema = z.record(z.string(), z.string())

/**
 * Everything a supervisor needs to run one run of one session. It crosses into a detached supervisor (its
 * stdin) and a tmux pane's supervisor (a private file): both parse it with this schema and refuse anything else
 * (an unknown key, a value of the wrong type) with a clear error, never cast it.
 */
const RunPlanSchema = z.strictObject({
  sessionsDir: PathSchema,
  logsDir: PathSchema,
  id: z.string().check(z.regex(SESSION_ID_PATTERN, 'a session id')),
  runN: z.int().check(z.positive()),
  /** A resume of a record that has no runs (written by an older tool) is still a resume, though it is run 1. */
  kind: z.enum(['start', 'resume']),
  command: z.string().check(z.minLength(1)),
  args: z.array(z.string()),
  cwd: PathSchema,
  env: EnvSchema,
  mode: z.enum(['interactive', 'headless', 'background']),
  /** Where the session runs: its backend collects the run's work once the agent has exited. */
  backend: z.enum(BACKEND_NAMES),
  /** The provider prints its own session id in its output (codex `thread_id`, opencode `sessionID`). */
  sessionIdCapture: z.optional(z.nullable(z.strictObject({ key: z.string(), args: z.array(z.string()) }))),
  /** The event stream of its headless output, read for failures its exit code hides (pi). */
  headlessOutput: z.optional(z.nullable(z.enum(HEADLESS_OUTPUTS))),
  /** A worktree and the commit it started from: `files_modified` is recorded against it when the run ends. */
  changesAgainst: z.optional(z.nullable(z.strictObject({ dir: PathSchema, base: z.string() }))),
  /** The provider's name: how its screen shows its state (tmux runs). */
  provider: z.optional(z.string()),
  /** `hooks.on_status` from trusted config, run by the supervisor on the changes it makes. */
  onStatus: z.optional(z.nullable(z.array(z.string()))),
  /** A run hosted in tmux: its server and session (docs/tmux.md). */
  tmux: z.optional(z.nullable(z.strictObject({ socket: z.string(), session: z.string() }))),
  /** The launcher's environment: the supervisor's git, hooks and record seals use it (tmux gives its own). */
  supervisorEnv: z.optional(EnvSchema),
  /** Checkpoints at the end of the run and every `intervalMs` (0: only at the end); absent outside git. */
  checkpoints: z.optional(z.nullable(z.strictObject({ intervalMs: z.number().check(z.gte(0)) }))),
  /** The session's budget: the agent is stopped (as by pause) once the cost its output reports reaches it. */
  budget: z.optional(
    z.nullable(
      z.strictObject({ limit_usd: z.number().check(z.gt(0)), spent_usd: z.number().check(z.gte(0)) }),
    ),
  ),
  /** config `pricing.<model>`: the price of tokens for an agent that reports no cost (docs/budgets.md). */
  pricing: z.optional(z.nullable(ModelPricingSchema)),
  /** `--timeout`: the most this run may take, in ms, from its start; then it is stopped as by pause. */
  timeoutMs: z.optional(z.nullable(z.number().check(z.gt(0)))),
})
export type RunPlan = z.infer<typeof RunPlanSchema>

/** A plan as a supervisor received it (JSON text, or the value read from a file): parsed, or a clear error. */
export function parseRunPlan(input: unknown): RunPlan {
  let value = input
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input)
    } catch {
      throw new UsageError('the run plan handed to the supervisor is not JSON', undefined, 'PLAN_INVALID')
    }
  }
  const parsed = z.safeParse(RunPlanSchema, value)
  if (parsed.success) return parsed.data
  const issue = parsed.error.issues[0]
  const where = issue?.path.length ? issue.path.join('.') : 'the plan'
  throw new UsageError(
    `the run plan handed to the supervisor is invalid: ${where}: ${issue?.message ?? 'unexpected'}`,
    undefined,
    'PLAN_INVALID',
  )
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
  /** Where it runs, and whether its backend takes interval checkpoints (the worktree is here). */
  backend: { name: BackendName; intervalCheckpoints: boolean }
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
    env: definedEnv({ ...ctx.env, HARNESS_SESSION_ID: session.id, HARNESS_DIR: paths.harnessDir }),
    mode: options.mode,
    backend: options.backend.name,
    sessionIdCapture: provider.session_id_capture,
    headlessOutput: provider.headless_output,
    provider: provider.name,
    onStatus: config.hooks?.on_status ?? null,
    tmux,
    ...(tmux ? { supervisorEnv: definedEnv(ctx.env) } : {}),
    changesAgainst:
      session.is_worktree && session.base_commit
        ? { dir: session.worktree_dir, base: session.base_commit }
        : null,
    checkpoints: session.base_commit
      ? { intervalMs: options.backend.intervalCheckpoints ? checkpointIntervalMs(config) : 0 }
      : null,
    budget: options.budget,
    // Only where the agent reports tokens but no cost: a reported cost is never replaced by an estimate.
    pricing: costSourceOf(provider.headless_output) === 'tokens' ? options.pricing : null,
    timeoutMs: options.timeoutMs ?? null,
  }
}

/** An environment as the plan holds it: the variables that are set. */
function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const defined: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (value !== undefined) defined[name] = value
  return defined
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
