import type { HarnessConfig } from '../config.js'
import type { IdentityCheck } from '../process/identity.js'
import type { RootIdentity, StopOutcome } from '../process/stop.js'
import type { ProjectPaths } from '../project.js'
import type { Chain } from './chains/store.js'
import type { SessionRecord } from './record/schema.js'

/**
 * What the session services need from their surroundings, owned by the domain (see docs/design.md, "Layers").
 * The CLI's `Context` implements it; a test builds one from fakes in a few lines (test/helpers/fake-env.ts).
 * Nothing below `commands/` reads `process.*`, the clock or the process table, or writes to stdout/stderr
 * around it: it goes through this port.
 */
export interface SessionEnv {
  /** The directory harness was run from. */
  readonly cwd: string
  /** The environment handed to git, the agent and `worktree.setup`. */
  readonly env: NodeJS.ProcessEnv
  /** A foreground agent may have the terminal: stdin is one, and stdout is not reserved for JSON. */
  readonly interactive: boolean
  /** stdin is a terminal (`session attach` hands it to tmux, whatever --json says). */
  readonly stdinIsTerminal: boolean
  /** Where a headless foreground run copies the agent's output (stdout, or stderr under --json). */
  readonly agentOutput: NodeJS.WritableStream
  project(): Promise<ProjectPaths>
  /** The project's session records (one store per command). */
  store(): Promise<RecordStore>
  /** The project's chains, read only; a corrupt chain file is left out without a word (completion). */
  chains(): Promise<ChainRecords>
  /** The merged user and project configuration. */
  config(): Promise<HarnessConfig>
  /** The time, for every decision that depends on it (deadlines, run times, stop requests). */
  readonly clock: Clock
  /** The process table: who is alive, and signals to the processes a record names. */
  readonly processes: Processes
  /** A line for people (progress, what harness chose to do); never part of a command's result. */
  notice(message: string): void
  /** Notices are not shown (--quiet). */
  readonly quiet?: boolean
  /** A warning for people (a corrupt record, say): shown even under --quiet. */
  warn(message: string): void
}

/** A record file that does not parse or validate. */
export interface RecordProblem {
  path: string
  reason: string
}

/**
 * The session records, as services use them (the real one is `SessionStore`, record/store.ts). Its contract,
 * which test/unit/sessions/record/store-contract.test.ts runs against the real store and the fake alike:
 * every create and update bumps `rev` and stamps `updated_at`; `get` of a missing id is null and `update` of
 * one throws SessionNotFoundError; `create` of a taken id throws SessionExistsError; an update whose function
 * returns undefined writes nothing.
 */
export interface RecordStore {
  /** The sessions folder (watched by `session wait`; a fake names one that need not exist). */
  readonly dir: string
  /** The environment of the user the store acts for (what a container engine is asked with). */
  readonly env: NodeJS.ProcessEnv
  recordPath(id: string): string
  ensureDir(): void
  /** Ids of every record file, unread. */
  ids(): string[]
  exists(id: string): boolean
  /** The record, or null when there is none; a corrupt one throws CorruptRecordError. */
  get(id: string): SessionRecord | null
  /** Every valid record; corrupt ones are reported through the store's warning and skipped. */
  list(): SessionRecord[]
  /** Ids of every record file, after leftovers of killed writers were swept. */
  recordIds(): string[]
  /** One record, validated; null when missing or corrupt. */
  read(id: string): SessionRecord | null
  /** The file's fields as they are (parsed, not validated), or null. */
  peek(id: string): Record<string, unknown> | null
  create(record: SessionRecord): Promise<SessionRecord>
  restore(id: string, text: Buffer): Promise<SessionRecord>
  update(
    id: string,
    mutate: (current: SessionRecord) => SessionRecord | undefined,
    options?: { adopt?: boolean },
  ): Promise<SessionRecord>
  delete(
    id: string,
    prepare?: (current: SessionRecord) => void | Promise<void>,
    known?: SessionRecord,
  ): Promise<void>
  corruptRecords(): RecordProblem[]
  quarantine(id: string, corruptDir: string): Promise<{ moved_to: string; report: string } | null>
  /** A warning given at most once per store. */
  warnOnce(key: string, reason: string): void
}

/** The chains a project holds, read only. */
export interface ChainRecords {
  list(): Chain[]
}

export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number
}

/** A process as a record names it: pid, start time and where it ran. */
export interface RecordedIdentity {
  pid?: number | null
  start_time?: string | null
  hostname?: string | null
  boot_id?: string | null
  pid_namespace?: string | null
}

/** What services ask of the process table (the real one: process/identity.ts and process/stop.ts). */
export interface Processes {
  /** This process's pid: a session never stops itself, and a stop request says who asked. */
  readonly selfPid: number
  /** Is the process a record names still that process? */
  check(recorded: RecordedIdentity): IdentityCheck
  /** Sends `signal` to `pid`; false when there is no such process (or it is not ours to signal). */
  signal(pid: number, signal: NodeJS.Signals): boolean
  /** Stops an identity-checked process tree: SIGTERM, then SIGKILL after `graceMs`. */
  stopTree(root: RootIdentity, options: { graceMs: number }): Promise<StopOutcome>
}

/** The real clock. */
export const systemClock: Clock = { now: () => Date.now() }
