import type { HarnessConfig } from '../config.js'
import type { IdentityCheck } from '../process/identity.js'
import type { OutputSink } from '../process/pipes.js'
import type { RootIdentity, StopOutcome } from '../process/stop.js'
import type { ProjectPaths } from '../project.js'
import type { RecordStore } from './record/record-store.js'

export type { RecordProblem, RecordStore } from './record/record-store.js'

/**
 * What the session services need from their surroundings, owned by the domain (see
 * docs/development/design.md, "Layers"). The CLI's `Context` implements it; a test builds one from fakes in a
 * few lines (test/helpers/fake-env.ts). Nothing below `commands/` reads `process.*`, the clock or the process
 * table, or writes to stdout/stderr around it: it goes through this port.
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
  readonly agentOutput: OutputSink
  project(): Promise<ProjectPaths>
  /** The project's session records (one store per command). */
  store(): Promise<RecordStore>
  /** Another project's records (`session list --all-projects`), sealed for that project; read, never acted on. */
  storeOf(paths: ProjectPaths): Promise<RecordStore>
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

/** The chains a project holds, read only: what completion shows of them (chains/store.ts has the rest). */
export interface ChainRecords {
  list(): { name: string; steps: readonly unknown[] }[]
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
