import * as z from 'zod/mini'
import en from 'zod/v4/locales/en.js'
import { BACKEND_NAMES } from '../../backend-names.js'
import type { Permission } from '../../providers/schema.js'
import { type CompiledCheck, compileCheck, REFER } from './compiled-check.js'
import { SESSION_STATUSES, type SessionStatus, SessionStatusSchema } from './status.js'

export { SESSION_STATUSES, type SessionStatus, SessionStatusSchema }

// zod/mini ships without messages; English ones make corrupt-record reports readable.
z.config(en())

export const SCHEMA_VERSION = 1

/** ISO 8601 with a zone; records written by older tools may lack milliseconds. */
const TimeSchema = z.iso.datetime({ offset: true })
const opt = <T extends z.core.SomeType>(schema: T) => z.optional(z.nullable(schema))
/**
 * A count or an amount (tokens, USD, bytes): finite and never negative, at read and at write. Such numbers come
 * from an agent's output (docs/security.md, "Numbers from agent output").
 */
const amount = () => z.number().check(z.gte(0))

/** The permission levels of docs/providers.md (a type-only tie keeps the providers' module unloaded here). */
const RECORD_PERMISSIONS = ['readonly', 'supervised', 'autonomous'] as const satisfies readonly Permission[]
/** A permission level as records and chain steps store it. */
export const PermissionSchema = z.enum(RECORD_PERMISSIONS)

export const StopRequestSchema = z.looseObject({
  action: z.enum(['kill', 'pause']),
  at: TimeSchema,
  by_pid: opt(z.number()),
  /** Time between SIGTERM and SIGKILL that the requester asked for. */
  grace_ms: opt(z.number()),
  /** Why harness itself asked: `budget` when the session's cost reached `budget_usd` (docs/budgets.md). */
  reason: opt(z.string()),
})
export type StopRequest = z.infer<typeof StopRequestSchema>

/** Tokens and cost a provider reported for one run (docs/history.md); null fields were not reported. */
export const UsageSchema = z.looseObject({
  input_tokens: opt(amount()),
  output_tokens: opt(amount()),
  cached_tokens: opt(amount()),
  cost_usd: opt(amount()),
  /** `pricing` when `cost_usd` is the tokens priced by config `pricing.<model>`; absent: the agent's own figure. */
  cost_source: opt(z.string()),
})

/** The sum over the runs that reported usage. */
export const CostSchema = z.looseObject({
  total_tokens: opt(amount()),
  estimated_cost_usd: opt(amount()),
})

export const RunSchema = z.looseObject({
  n: z.number(),
  kind: z.enum(['start', 'resume']),
  pid: opt(z.number()),
  pid_start_time: opt(z.string()),
  /** The agent had already exited when its pid was to be recorded: no pid is written without its start time. */
  agent_exited: opt(z.boolean()),
  supervisor_pid: opt(z.number()),
  supervisor_start_time: opt(z.string()),
  args: opt(z.array(z.string())),
  started_at: TimeSchema,
  ended_at: opt(TimeSchema),
  exit_code: opt(z.number()),
  signal: opt(z.string()),
  hostname: opt(z.string()),
  boot_id: opt(z.string()),
  pid_namespace: opt(z.string()),
  detached: opt(z.boolean()),
  /** Where this run's output begins in the session's log, so that `logs` can mark each run. */
  log_offset: opt(z.number()),
  usage: opt(UsageSchema),
  /** A failure the agent's exit code hides (an error event in its headless output). */
  error: opt(z.string()),
})
export type Run = z.infer<typeof RunSchema>

export const CHECKPOINT_TRIGGERS = ['manual', 'interval', 'run-end', 'before-restore'] as const
export type CheckpointTrigger = (typeof CHECKPOINT_TRIGGERS)[number]

export const CheckpointSchema = z.looseObject({
  n: z.number(),
  ref: z.string(),
  commit: z.string(),
  /** The branch HEAD the checkpoint was taken on (its first parent). */
  head: opt(z.string()),
  message: opt(z.string()),
  created_at: TimeSchema,
  /** Kept as a string: a newer version's trigger must not make the record unreadable. */
  trigger: opt(z.string()),
  /** Paths that differ from the previous checkpoint (the first: from its HEAD). */
  files_changed: opt(amount()),
  tokens_used: opt(amount()),
  /** How many interval checkpoints were folded into this one (docs/continuity.md, "How many are kept"). */
  folded: opt(amount()),
})
export type Checkpoint = z.infer<typeof CheckpointSchema>

export const MetadataSchema = z.looseObject({
  os: opt(z.string()),
  hostname: opt(z.string()),
  pid_namespace: opt(z.string()),
  boot_id: opt(z.string()),
  harness_version: opt(z.string()),
  node_version: opt(z.string()),
})

/** A container session's container (docs/backends.md): the engine's identity of it plays pid + start time. */
export const ContainerFactsSchema = z.looseObject({
  engine: z.string(),
  image: z.string(),
  network: z.string(),
  /** Names of the variables passed in; never their values. */
  env: z.array(z.string()),
  id: z.string(),
  created: z.string(),
  name: z.string(),
  /** The private clone the agent commits into, and the branch tip it started from (null without git). */
  git_dir: opt(z.string()),
  start_tip: opt(z.string()),
  /** How the agent's commits came back when the run ended. */
  collected: opt(z.looseObject({ kind: z.string() })),
})
export type ContainerFacts = z.infer<typeof ContainerFactsSchema>

/**
 * A Slurm session's job of its latest run (docs/backends.md, "The Slurm backend"): the cluster's name, the job
 * id and the submit time, as Slurm reported them, play pid + start time.
 */
export const SlurmFactsSchema = z.looseObject({
  cluster: z.string(),
  job_id: z.string(),
  submit_time: z.string(),
  /** The run the job is of, and the user's folder in the spool that run used (`<slurm.spool>/harness-<uid>`). */
  run: z.number(),
  spool: z.string(),
  /** The branch tip and the worktree's whole tree (uncommitted files included) the job started from. */
  start_tip: z.string(),
  start_tree: z.string(),
  /** Names of the variables the job got (`slurm.env`); never their values. */
  env: opt(z.array(z.string())),
  /** The node the agent ran on, once its run is settled. */
  node: opt(z.string()),
  /** How the job's work came back when its run was settled. */
  collected: opt(z.looseObject({ kind: z.string() })),
})
export type SlurmFacts = z.infer<typeof SlurmFactsSchema>

export const SessionRecordSchema = z.looseObject({
  id: z.string(),
  provider: z.string(),
  permission: opt(PermissionSchema),
  status: SessionStatusSchema,
  worktree_dir: z.string(),
  is_worktree: opt(z.boolean()),
  git_branch: opt(z.string()),
  base_dir: opt(z.string()),
  pid: opt(z.number()),
  exit_code: opt(z.number()),
  prompt: opt(z.string()),
  /** A prompt too long for the record: in `<id>.prompt` beside it, `prompt` its first characters (bounds.ts). */
  prompt_file: opt(z.looseObject({ sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)), bytes: amount() })),
  created_at: TimeSchema,
  updated_at: opt(TimeSchema),
  completed_at: opt(TimeSchema),
  schema_version: opt(z.number()),
  rev: opt(z.number()),
  model: opt(z.string()),
  task_hash: opt(z.string()),
  base_commit: opt(z.string()),
  agent_session_id: opt(z.string()),
  stop_reason: opt(z.string()),
  stop_request: opt(StopRequestSchema),
  runs: opt(z.array(RunSchema)),
  checkpoints: opt(z.array(CheckpointSchema)),
  files_modified: opt(z.array(z.string())),
  /** How many paths changed when `files_modified` lists only the first of them (bounds.ts). */
  files_modified_total: opt(amount()),
  metadata: opt(MetadataSchema),
  cost: opt(CostSchema),
  /** Set when this session's run made `git_branch`: only then may harness delete it (docs/security.md). */
  branch_created: opt(z.boolean()),
  /** Why the log could not be written (the run's outcome was recorded anyway). */
  log_error: opt(z.string()),
  /** The ref the user gave as the base (or the branch harness ran on), for `merge` and `show`. */
  base_ref: opt(z.string()),
  /** The user's directory relative to the repository's top: the agent starts at its counterpart. */
  start_subdir: opt(z.string()),
  /** Arguments given after `--`, passed again on resume. */
  extra_args: opt(z.array(z.string())),
  /** HMAC-SHA256 of the rest of the record under the user's key (docs/security.md). */
  seal: opt(z.string()),
  /** Computed on every read, never stored: whether `seal` is the user's. */
  sealed: z.optional(z.boolean()),
  /** Computed on every read, never stored: why `seal` is not the user's (another key, another project...). */
  seal_problem: z.optional(z.string()),
  /** The real path of the project the record was sealed for (the seal covers it too). */
  project: opt(z.string()),
  /** A public name of the key that sealed the record: another one means another user or HOME. */
  seal_key: opt(z.string()),
  /** Where the session runs (docs/backends.md): absent means local. */
  backend: opt(z.enum(BACKEND_NAMES)),
  /** The container of its latest run (backend container). */
  container: opt(ContainerFactsSchema),
  /** The Slurm job of its latest run (backend slurm). */
  slurm: opt(SlurmFactsSchema),
  /** Interactive sessions hosted in tmux (docs/tmux.md): the tmux session and the socket of its server. */
  tmux_session: opt(z.string()),
  tmux_socket: opt(z.string()),
  /** What the agent's screen shows while it runs in tmux: busy, waiting (for the user), idle or unknown. */
  state: opt(z.string()),
  merged_at: opt(TimeSchema),
  merge_commit: opt(z.string()),
  /** The branch tip `session merge` landed: while the branch still points there, cleanup counts it merged. */
  merged_head: opt(z.string()),
  context_from: opt(z.array(z.string())),
  /** The most the session may cost, all runs together, in USD (`run --budget`, docs/budgets.md). */
  budget_usd: opt(z.number().check(z.gt(0))),
  /** `run --name`: unique in the project, accepted wherever an id is (docs/commands.md, "Names"). */
  name: opt(z.string()),
  /** When it last became PAUSED (set by the store on every such write). */
  paused_at: opt(TimeSchema),
  /** Of `files_modified`: the paths the session added and deleted (the rest it modified). */
  files_added: opt(z.array(z.string())),
  files_deleted: opt(z.array(z.string())),
})
export type SessionRecord = z.infer<typeof SessionRecordSchema>

let compiledRecordCheck: CompiledCheck | null | undefined

/**
 * Validates a parsed record; returns a reason string on failure (path: message of the first issues). The
 * compiled check answers for the records harness writes; whatever it does not plainly accept goes to zod.
 */
export function parseSessionRecord(
  value: unknown,
): { ok: true; record: SessionRecord } | { ok: false; reason: string } {
  if (compiledRecordCheck === undefined) compiledRecordCheck = compileCheck(SessionRecordSchema)
  const fast = compiledRecordCheck?.(value) ?? REFER
  if (fast !== REFER) return { ok: true, record: fast as SessionRecord }
  const result = z.safeParse(SessionRecordSchema, value)
  if (result.success) return { ok: true, record: result.data }
  const reason = result.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(record)'}: ${issue.message}`)
    .join('; ')
  return { ok: false, reason }
}
