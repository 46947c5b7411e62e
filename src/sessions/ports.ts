import type { HarnessConfig } from '../config.js'
import type { ProjectPaths } from '../project.js'
import type { SessionStore } from './record/store.js'

/**
 * What the session services need from their surroundings, owned by the domain (see docs/design.md, "Layers").
 * The CLI's `Context` implements it; a test builds one in a few lines. Nothing below `commands/` reads
 * `process.*` or writes to stdout/stderr: it goes through this port.
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
  store(): Promise<SessionStore>
  /** The merged user and project configuration. */
  config(): Promise<HarnessConfig>
  /** A line for people (progress, what harness chose to do); never part of a command's result. */
  notice(message: string): void
  /** Notices are not shown (--quiet). */
  readonly quiet?: boolean
  /** A warning for people (a corrupt record, say): shown even under --quiet. */
  warn(message: string): void
}
