import type { BackendName } from '../../backend-names.js'
import type { HarnessConfig } from '../../config.js'
import type { ProcessIdentity } from '../../process/identity.js'
import type { OutputSink } from '../../process/pipes.js'
import type { AgentExit } from '../../process/supervisor.js'
import type { Processes, RecordStore } from '../ports.js'
import type { IdentityCheckOf, Liveness } from '../record/liveness.js'
import type { RunExit } from '../record/outcome.js'
import type { Run, SessionRecord } from '../record/schema.js'

export type { BackendName }

/**
 * Where a session runs (SPEC §14 "The seam", docs/backends.md): one interface, one module per backend beside it
 * (`local/`, `container/`, `slurm/`), one picker (`index.ts`), as pnpm picks a fetcher. The record and the
 * commands stay the same; the run pipeline asks the backend for everything that depends on where the agent is:
 * its part of the workspace, the start, the identity, the liveness of many sessions at once, the logs, the stop,
 * the wait, the work collected, the resume and the destroy. Nothing outside `backends/` asks which backend it is.
 */

/**
 * What a backend supports (docs/backends.md, "What each backend supports"), as data: a combination it does not
 * support is refused before anything is made (exit 2, naming the backend), never run somewhere else.
 */
export interface BackendSupport {
  /** The agent can have a terminal: an interactive foreground run. Without it a run in a terminal is headless. */
  interactive: boolean
  /** `--tmux` (and config `interactive.host: "tmux"`). */
  tmux: boolean
  /** `--no-worktree`: the agent works in the user's folder. */
  noWorktree: boolean
  /** `--budget`: harness reads the cost from the agent's live output. */
  budget: boolean
  /** `checkpoint.interval`: checkpoints of the worktree while the agent runs. */
  intervalCheckpoints: boolean
  /** What may be asked of a session while it runs: its worktree (checkpoint, diff) or its terminal. */
  whileRunning: { checkpoint: boolean; diff: boolean; attach: boolean; send: boolean }
}

/** A backend on this machine supports all of it (local, container). */
export const FULL_SUPPORT: BackendSupport = {
  interactive: true,
  tmux: true,
  noWorktree: true,
  budget: true,
  intervalCheckpoints: true,
  whileRunning: { checkpoint: true, diff: true, attach: true, send: true },
}

/**
 * Where a local supervisor of a background run lives (local/host.ts): a detached process of this machine, or the
 * process of a new tmux session's pane, so that an interactive agent has a terminal that outlives the user's.
 */
export interface RunHost {
  readonly kind: 'detached' | 'tmux'
  /** Starts a supervisor that does nothing until it gets its plan (`send`), or exits on `abandon`. */
  startSupervisor(env: NodeJS.ProcessEnv): Promise<HostedSupervisor>
}

export interface HostedSupervisor {
  identity: ProcessIdentity
  /** Hands the supervisor its plan, once the record naming it is committed. */
  send(plan: unknown): void
  /** Gives up before committing: the supervisor starts nothing and goes away. */
  abandon(): void
}

/** What a reading command lends a backend: enough to look, nothing to change (SPEC §4: reads never act). */
export interface ReadEnv {
  /** The user's environment: the engine's and the cluster's settings (CONTAINERS_CONF, SLURM_CONF, PATH). */
  env: NodeJS.ProcessEnv
  /** `.harness` of the project (spool and log paths are read from the sealed record). */
  harnessDir: string
  /** The process table, as the port sees it (one snapshot for a whole listing). */
  check: IdentityCheckOf
  now: Date
  /** A warning shown once per command (an engine that did not answer). */
  warnOnce(key: string, message: string): void
}

/** What an acting command lends a backend: it may write the record (under its lock), run git, engine, cluster. */
export interface ActEnv extends ReadEnv {
  store: RecordStore
  processes: Processes
  /** Given up when a stop is asked for while the work is being collected. */
  signal?: AbortSignal
}

/** What collecting a run's work needs: the store to read facts through, never a process to signal. */
export type CollectEnv = Pick<ActEnv, 'env' | 'harnessDir' | 'store' | 'now' | 'signal'>

/** What a backend says of one RUNNING record (`liveness`): read, never written but for `stale`. */
export type BackendState =
  /** Its agent runs (or waits in the engine's queue: `queued`, the engine's reason). */
  | { kind: 'alive'; liveness: Extract<Liveness, 'running' | 'orphaned'>; queued?: string }
  /** Everything it names is verifiably gone and nothing says how it ended: reconciled PAUSED (the one write). */
  | { kind: 'stale' }
  /** It cannot be verified (another host, a foreign identity, an engine that did not answer): never acted on. */
  | { kind: 'unverified' }
  /**
   * Its run ended and nobody recorded it yet (its supervisor is gone: the engine or the job's exit-code file
   * says how): a read shows this outcome without writing it; an acting command or `collect` settles it.
   */
  | { kind: 'ended'; exit: RunExit }

/** One run, as the pipeline planned it: what the backend prepares and starts. */
export interface RunRequest {
  id: string
  runN: number
  kind: 'start' | 'resume'
  /** The agent's argv in the provider's form for this run's mode. */
  command: string
  args: string[]
  /** Where the agent starts: the worktree's counterpart of the user's folder. */
  cwd: string
  mode: 'interactive' | 'headless' | 'background'
  /** A run hosted in tmux: its server and session (docs/tmux.md). */
  tmux: { socket: string; session: string } | null
  /** harness's environment: the agent's on this machine; a backend that runs it elsewhere passes only names. */
  env: NodeJS.ProcessEnv
  harnessDir: string
  agentDir: string
  worktreeDir: string
  /** The session's repository and branch; null for a session in a plain folder (`--no-worktree`). */
  repo: { dir: string; branch: string } | null
  /** The session as it stands before this run (for a resume: where its last run was). */
  session: SessionRecord
  /** `--timeout` of this run, in ms. */
  timeoutMs: number | null
  /** The configuration in force (the backend's own section: `container.*`, `slurm.*`). */
  config: HarnessConfig
  /** `run --image/--engine`. */
  flags: { image?: string; engine?: 'podman' | 'docker' }
}

/** What `check` looks at before a new run makes anything. */
export interface BackendCheck {
  /** The agent's command, and how errors name it (`agent "claude"`). */
  command: string
  what: string
  env: NodeJS.ProcessEnv
  /** The user's folder. */
  cwd: string
  config: HarnessConfig
  flags: RunRequest['flags']
  /** The repository the session's worktree will be made in; null without one. */
  repoDir: string | null
  /** A resume: the session as it stands (it runs where it ran). */
  session?: SessionRecord
}

/** What a backend made for a run before it starts (`prepare`). */
export interface PreparedRun {
  /** Fields the record gains with the run (`backend`, and the backend's facts), committed with it. */
  record: Partial<SessionRecord>
  /** What a local supervisor runs in the agent's place (a container: the engine's client attached to it). */
  command?: { command: string; args: string[] }
  /** Undoes what `prepare` made, for a run that never got its record. */
  undo(): Promise<void>
}

/** How a run went once `start` returns: the record, and in the foreground how the agent ended. */
export interface StartedRun {
  record: SessionRecord
  exit?: AgentExit
}

/**
 * What the pipeline lends `start`: a supervisor of this machine (harness itself in the foreground, a detached
 * one, or one in a tmux pane) for backends whose agent a local process waits on, or the commit of a run that
 * no local process supervises (the engine does).
 */
export interface StartIo {
  /** Runs `command` as the run's agent under a local supervisor on `host` (null: harness itself, here). */
  supervise(command: { command: string; args: string[] }, host: RunHost | null): Promise<StartedRun>
  /** Commits the run (no supervisor of harness's: the engine supervises); the record as it then stands. */
  commit(run: Run, fields: Partial<SessionRecord>): Promise<SessionRecord>
  /** Where a foreground run shows the agent's output (stdout, or stderr under --json). */
  output: OutputSink
  /** An acting command's surroundings, for a foreground run that settles its own end. */
  act(): Promise<ActEnv>
}

/** Where a session's output is (`logs`): its files in order, the last one growing while the run lasts. */
export interface LogSource {
  files: string[]
  /** How often a follower asks whether the session still runs (a cluster is asked less often than a file). */
  pollMs: number
}

/** How a stop without a supervisor went (`stop`). */
export type StopOutcome =
  /** It was running and is stopped: how it ended, for the record. */
  | { kind: 'stopped'; exit: RunExit }
  /** Nothing ran any more (what ended it is recorded as the agent's own end). */
  | { kind: 'gone'; exit: RunExit }
  /** What the record names cannot be verified as its own: never stopped. */
  | { kind: 'unverified' }

/** One line of `harness doctor` about a backend (the shape of doctor.ts's checks). */
export interface DoctorLine {
  name: string
  status: 'ok' | 'warn' | 'fail' | 'info'
  detail: string
  hint?: string
}

/** What `doctor` asks of a backend: whether it can run sessions here, and (`submitTest`) a real run of its own. */
export interface DoctorRequest {
  config: HarnessConfig
  env: NodeJS.ProcessEnv
  /** Config sends sessions there (`backend`): a backend that cannot is a failure, not a note. */
  chosen: boolean
  /** `doctor --submit-test`: a real job or container, under a deadline. */
  submitTest: boolean
  /** The default agent's command (looked for where the agent would run). */
  agentCommand: string
}

/**
 * A backend: one module implementing this, beside its siblings. Reading operations (`identity`, `liveness`,
 * `logs`, `wait`) take a ReadEnv and change nothing; acting ones take an ActEnv.
 */
export interface SessionBackend {
  readonly name: BackendName
  readonly supports: BackendSupport
  /** Before anything is made: what a new run needs is there (engine, image, spool, sbatch): exit 2 or 5. */
  check(run: BackendCheck): Promise<void>
  /** Prepare the workspace on the backend's side (a private clone, a container, the spool's bundle). */
  prepare(run: RunRequest): Promise<PreparedRun>
  /** Start the agent; the run is committed through `io` before or as it starts. */
  start(run: RunRequest, prepared: PreparedRun, io: StartIo): Promise<StartedRun>
  /** The identity of the latest run as the sealed record names it, in words (null: none recorded). */
  identity(record: SessionRecord): string | null
  /** Liveness of many RUNNING records at once: one look at the process table, one engine or cluster query. */
  liveness(records: readonly SessionRecord[], env: ReadEnv): Promise<BackendState[]>
  /** Where the session's output is and how to follow it. */
  logs(record: SessionRecord, logsDir: string): LogSource
  /** Stop the run without a supervisor of harness's (grace, then force), its identity verified first. */
  stop(record: SessionRecord, graceMs: number, env: ActEnv): Promise<StopOutcome>
  /**
   * Block (reading only) until the run may have ended, or `timeoutMs` passed: the engine's wait, or one look
   * at the cluster. False when the backend has nothing to wait on (the record is watched instead).
   */
  wait(record: SessionRecord, env: ReadEnv, timeoutMs: number): Promise<boolean>
  /**
   * Collect the ended run's work (SPEC §10: through the quarantine) and release what the run held: what the
   * record gains, written with the run's outcome in one update. `ours`: the supervisor of that very run;
   * `alongside`: it takes a release that does not bear on the work (a container's removal) to finish beside
   * the rest of the run's end, before the outcome is written.
   */
  collect(
    record: SessionRecord,
    env: CollectEnv,
    options?: { ours?: boolean; alongside?: (release: Promise<void>) => void },
  ): Promise<(current: SessionRecord) => SessionRecord>
  /** Whether the latest run's work is still to come back (a collection that failed): cleanup keeps it. */
  uncollected(record: SessionRecord): string | null
  /** Before a resume: the last run's work back where the next run starts from (exit 4 while it cannot be). */
  resume(record: SessionRecord, env: ActEnv): Promise<void>
  /** Whatever the session still holds in the backend goes (cleanup, delete). */
  destroy(record: SessionRecord, env: Pick<ActEnv, 'env'>): Promise<void>
  /** What `doctor` says of it: its engine or cluster, its version, whether a test run starts. */
  doctor(request: DoctorRequest): Promise<DoctorLine[]>
}
