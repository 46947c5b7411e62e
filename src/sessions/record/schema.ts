import { BACKEND_NAMES } from '../../backend-names.js'
import type { Permission } from '../../providers/schema.js'
import {
  array,
  boolean,
  check,
  dateTime,
  describeShape,
  type Infer,
  looseObject,
  matching,
  number,
  numberFrom,
  oneOf,
  opt,
  optional,
  reshape,
  string,
  upperOneOf,
} from './shape.js'
import { SESSION_STATUSES, type SessionStatus } from './status.js'

export { SESSION_STATUSES, type SessionStatus }

export const SCHEMA_VERSION = 1

/** ISO 8601 with seconds and a zone; records written by older tools may lack milliseconds. */
const TimeSchema = dateTime
/**
 * A count or an amount (tokens, USD, bytes): finite and never negative, at read and at write. Such numbers come
 * from an agent's output (docs/security.md, "Numbers from agent output").
 */
const amount = numberFrom(0)

/** The permission levels of docs/providers.md (a type-only tie keeps the providers' module unloaded here). */
export const RECORD_PERMISSIONS = [
  'readonly',
  'supervised',
  'autonomous',
] as const satisfies readonly Permission[]
/** A permission level as records store it. */
const PermissionSchema = oneOf(RECORD_PERMISSIONS)

const StopRequestSchema = looseObject({
  action: oneOf(['kill', 'pause']),
  at: TimeSchema,
  by_pid: opt(number),
  /** Time between SIGTERM and SIGKILL that the requester asked for. */
  grace_ms: opt(number),
  /** Why harness itself asked: `budget` when the session's cost reached `budget_usd` (docs/budgets.md). */
  reason: opt(string),
})
export type StopRequest = Infer<typeof StopRequestSchema>

/** Tokens and cost a provider reported for one run (docs/history.md); null fields were not reported. */
const UsageSchema = looseObject({
  input_tokens: opt(amount),
  output_tokens: opt(amount),
  cached_tokens: opt(amount),
  cost_usd: opt(amount),
  /** `pricing` when `cost_usd` is the tokens priced by config `pricing.<model>`; absent: the agent's own figure. */
  cost_source: opt(string),
})

/** The sum over the runs that reported usage. */
const CostSchema = looseObject({
  total_tokens: opt(amount),
  estimated_cost_usd: opt(amount),
})

const RunSchema = looseObject({
  n: number,
  kind: oneOf(['start', 'resume']),
  pid: opt(number),
  pid_start_time: opt(string),
  /** The agent had already exited when its pid was to be recorded: no pid is written without its start time. */
  agent_exited: opt(boolean),
  supervisor_pid: opt(number),
  supervisor_start_time: opt(string),
  args: opt(array(string)),
  started_at: TimeSchema,
  ended_at: opt(TimeSchema),
  exit_code: opt(number),
  signal: opt(string),
  hostname: opt(string),
  boot_id: opt(string),
  pid_namespace: opt(string),
  detached: opt(boolean),
  /** Where this run's output begins in the session's log, so that `logs` can mark each run. */
  log_offset: opt(number),
  usage: opt(UsageSchema),
  /** A failure the agent's exit code hides (an error event in its headless output). */
  error: opt(string),
})
export type Run = Infer<typeof RunSchema>

export type CheckpointTrigger = 'manual' | 'interval' | 'run-end' | 'before-restore'

const CheckpointSchema = looseObject({
  n: number,
  ref: string,
  commit: string,
  /** The branch HEAD the checkpoint was taken on (its first parent). */
  head: opt(string),
  message: opt(string),
  created_at: TimeSchema,
  /** Kept as a string: a newer version's trigger must not make the record unreadable. */
  trigger: opt(string),
  /** Paths that differ from the previous checkpoint (the first: from its HEAD). */
  files_changed: opt(amount),
  tokens_used: opt(amount),
  /** How many interval checkpoints were folded into this one (docs/continuity.md, "How many are kept"). */
  folded: opt(amount),
})
export type Checkpoint = Infer<typeof CheckpointSchema>

const MetadataSchema = looseObject({
  os: opt(string),
  hostname: opt(string),
  pid_namespace: opt(string),
  boot_id: opt(string),
  harness_version: opt(string),
  node_version: opt(string),
})

/** A container session's container (docs/backends.md): the engine's identity of it plays pid + start time. */
const ContainerFactsSchema = looseObject({
  engine: string,
  image: string,
  network: string,
  /** Names of the variables passed in; never their values. */
  env: array(string),
  id: string,
  created: string,
  name: string,
  /** The private clone the agent commits into, and the branch tip it started from (null without git). */
  git_dir: opt(string),
  start_tip: opt(string),
  /** How the agent's commits came back when the run ended. */
  collected: opt(looseObject({ kind: string })),
})
export type ContainerFacts = Infer<typeof ContainerFactsSchema>

/**
 * A Slurm session's job of its latest run (docs/backends.md, "The Slurm backend"): the cluster's name, the job
 * id and the submit time, as Slurm reported them, play pid + start time.
 */
export const SlurmFactsSchema = looseObject({
  cluster: string,
  job_id: string,
  submit_time: string,
  /** The run the job is of, and the user's folder in the spool that run used (`<slurm.spool>/harness-<uid>`). */
  run: number,
  spool: string,
  /** The branch tip and the worktree's whole tree (uncommitted files included) the job started from. */
  start_tip: string,
  start_tree: string,
  /** Names of the variables the job got (`slurm.env`); never their values. */
  env: opt(array(string)),
  /** The node the agent ran on, once its run is settled. */
  node: opt(string),
  /** How the job's work came back when its run was settled. */
  collected: opt(looseObject({ kind: string })),
})
export type SlurmFacts = Infer<typeof SlurmFactsSchema>

const SessionRecordSchema = looseObject({
  id: string,
  provider: string,
  permission: opt(PermissionSchema),
  status: upperOneOf(SESSION_STATUSES),
  worktree_dir: string,
  is_worktree: opt(boolean),
  git_branch: opt(string),
  base_dir: opt(string),
  pid: opt(number),
  exit_code: opt(number),
  prompt: opt(string),
  /** A prompt too long for the record: in `<id>.prompt` beside it, `prompt` its first characters (bounds.ts). */
  prompt_file: opt(looseObject({ sha256: matching(/^[0-9a-f]{64}$/), bytes: amount })),
  created_at: TimeSchema,
  updated_at: opt(TimeSchema),
  completed_at: opt(TimeSchema),
  schema_version: opt(number),
  rev: opt(number),
  model: opt(string),
  task_hash: opt(string),
  base_commit: opt(string),
  agent_session_id: opt(string),
  stop_reason: opt(string),
  stop_request: opt(StopRequestSchema),
  runs: opt(array(RunSchema)),
  checkpoints: opt(array(CheckpointSchema)),
  files_modified: opt(array(string)),
  /** How many paths changed when `files_modified` lists only the first of them (bounds.ts). */
  files_modified_total: opt(amount),
  metadata: opt(MetadataSchema),
  cost: opt(CostSchema),
  /** Set when this session's run made `git_branch`: only then may harness delete it (docs/security.md). */
  branch_created: opt(boolean),
  /** Why the log could not be written (the run's outcome was recorded anyway). */
  log_error: opt(string),
  /** The ref the user gave as the base (or the branch harness ran on), for `merge` and `show`. */
  base_ref: opt(string),
  /** The user's directory relative to the repository's top: the agent starts at its counterpart. */
  start_subdir: opt(string),
  /** Arguments given after `--`, passed again on resume. */
  extra_args: opt(array(string)),
  /** HMAC-SHA256 of the rest of the record under the user's key (docs/security.md). */
  seal: opt(string),
  /** Computed on every read, never stored: whether `seal` is the user's. */
  sealed: optional(boolean),
  /** Computed on every read, never stored: why `seal` is not the user's (another key, another project...). */
  seal_problem: optional(string),
  /** The real path of the project the record was sealed for (the seal covers it too). */
  project: opt(string),
  /** A public name of the key that sealed the record: another one means another user or HOME. */
  seal_key: opt(string),
  /** Where the session runs (docs/backends.md): absent means local. */
  backend: opt(oneOf(BACKEND_NAMES)),
  /** The container of its latest run (backend container). */
  container: opt(ContainerFactsSchema),
  /** The Slurm job of its latest run (backend slurm). */
  slurm: opt(SlurmFactsSchema),
  /** Interactive sessions hosted in tmux (docs/tmux.md): the tmux session and the socket of its server. */
  tmux_session: opt(string),
  tmux_socket: opt(string),
  /** What the agent's screen shows while it runs in tmux: busy, waiting (for the user), idle or unknown. */
  state: opt(string),
  merged_at: opt(TimeSchema),
  merge_commit: opt(string),
  /** The branch tip `session merge` landed: while the branch still points there, cleanup counts it merged. */
  merged_head: opt(string),
  context_from: opt(array(string)),
  /** The most the session may cost, all runs together, in USD (`run --budget`, docs/budgets.md). */
  budget_usd: opt(numberFrom(0, true)),
  /** `run --name`: unique in the project, accepted wherever an id is (docs/commands.md, "harness run"). */
  name: opt(string),
  /** When it last became PAUSED (set by the store on every such write). */
  paused_at: opt(TimeSchema),
  /** Of `files_modified`: the paths the session added and deleted (the rest it modified). */
  files_added: opt(array(string)),
  files_deleted: opt(array(string)),
})
export type SessionRecord = Infer<typeof SessionRecordSchema>

/**
 * Validates a parsed record (record/shape.ts): the record as read, or a reason string on failure (path: message
 * of the first issues). `asIs`: it holds exactly the parsed value's content (only its keys' order may differ),
 * which lets the seal be checked on the parsed value itself (record/seal.ts).
 */
export function parseSessionRecord(
  value: unknown,
): { ok: true; record: SessionRecord; asIs: boolean } | { ok: false; reason: string } {
  const result = check(SessionRecordSchema, value, 3)
  if (result.ok) return { ok: true, record: result.value, asIs: result.asIs }
  const reason = result.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(record)'}: ${issue.message}`)
    .join('; ')
  return { ok: false, reason }
}

/**
 * The record `parseSessionRecord` returns for `value`, made without a check: only for a value it accepted
 * before, unchanged (`asIs`), as the read cache vouches (record/read-cache.ts).
 */
export function reshapeSessionRecord(value: unknown): SessionRecord {
  return reshape(SessionRecordSchema, value) as SessionRecord
}

/** What the record's description accepts, as a text: a read cache made under another is not used. */
export function recordShapeText(): string {
  return describeShape(SessionRecordSchema)
}
