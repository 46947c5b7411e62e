import type { ContainerFacts, SessionRecord } from '../record/schema.js'

/**
 * Where a session runs (SPEC §14, docs/backends.md). The record and the commands stay the same; a backend is
 * what differs between running the agent here and running it elsewhere. Each backend is one module:
 * `local.ts` (this machine; tmux hosts its interactive runs), `container/` (podman or docker), and next a
 * Kubernetes Job backend.
 */
export type BackendName = 'local' | 'container'

/** One run as the launcher planned it: the agent's argv, its folder and environment. */
export interface RunRequest {
  id: string
  runN: number
  kind: 'start' | 'resume'
  command: string
  args: string[]
  cwd: string
  interactive: boolean
  env: NodeJS.ProcessEnv
  /** `.harness` of the project, and the session's per-agent folder in it. */
  harnessDir: string
  agentDir: string
  worktreeDir: string
  /** The repository of a worktree session and its branch; null when the session runs in a plain folder. */
  repo: { dir: string; branch: string } | null
  /** A resume: where the session's last run was (its work is collected first if it is not back yet). */
  previous: ContainerFacts | null
}

/** What the supervisor spawns for a run, what the record keeps of where it runs, and how to undo it. */
export interface PlacedRun {
  command: string
  args: string[]
  /** Fields the record gains (`backend`, `container`), committed with the run. */
  record: Partial<SessionRecord>
  /** What the supervisor must do once the spawned process has ended (container: collect and remove). */
  settle: RunSettlement | null
  /** Undoes what `place` made, for a run that never got its record. */
  undo(): Promise<void>
}

/** Handed to the supervisor in the run's plan: enough to end a run that is not a plain process. */
export interface RunSettlement {
  id: string
  container: ContainerFacts
  harnessDir: string
  repoDir: string | null
  worktreeDir: string
  branch: string | null
}

/** What the backend itself says of a RUNNING record whose supervisor is gone. */
export type BackendView =
  /** Nothing beyond the processes: the record's own liveness stands. */
  | { kind: 'processes' }
  | { kind: 'running' }
  | { kind: 'exited'; exitCode: number | null }
  | { kind: 'gone' }
  /** `warning`: the engine could not say (it did not answer in time). */
  | { kind: 'unverified'; warning?: string }

/**
 * The operations that differ by backend. The common ones (the workspace made by `git worktree add`, the log
 * file the supervisor writes, `wait` on the record) are shared: a backend adds only what its place needs.
 */
export interface SessionBackend {
  readonly name: BackendName
  /** Start: turns a planned run into what the supervisor spawns, making what the run needs (a container). */
  place(run: RunRequest): Promise<PlacedRun>
  /** Identity and liveness, when the supervisor is gone: the engine's view of what the record names. */
  view(record: SessionRecord, env: NodeJS.ProcessEnv): Promise<BackendView>
  /** Stop without a supervisor: what the record names, verified first (grace, then force). */
  stop(
    record: SessionRecord,
    graceMs: number,
    env: NodeJS.ProcessEnv,
  ): Promise<'stopped' | 'gone' | 'unverified'>
  /** Collect the result and release what the run held (the container), once the run has ended. */
  settle(
    settlement: RunSettlement,
    env: NodeJS.ProcessEnv,
    options?: { ours?: boolean; signal?: AbortSignal },
  ): Promise<unknown>
  /** Wait without a supervisor: until what the record names has ended (undefined: nothing to wait on). */
  wait(record: SessionRecord, env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<number | null | undefined>
  /** Destroy: whatever the session still holds in the backend goes (cleanup, delete). */
  destroy(record: SessionRecord, env: NodeJS.ProcessEnv): Promise<void>
}

/** `--image`, `--engine` and config `container.*`, for a new container run. */
export interface ContainerChoice {
  image?: string
  engine?: 'podman' | 'docker'
  network?: string
  env?: string[]
}
