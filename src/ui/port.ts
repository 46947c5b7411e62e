/**
 * What the dashboard (`harness ui`) is given to work with: the sessions to show and the actions its keys take.
 * The CLI implements it over the same services the commands call (cli/dashboard.ts); the dashboard itself
 * (ui/dashboard.ts and what it imports) only draws and reads keys, so it is the one part of harness that loads
 * Ink and React, in a chunk of its own that no other command loads (docs/ui.md).
 *
 * Every string here that comes from a record, a log, git or an error is already made safe for the terminal
 * (render/safe.ts) by the side that implements the port.
 */

/** A session as one row of the list. */
export interface DashboardSession {
  /** The record's id (escaped), and what the actions are given. */
  id: string
  /** The session's name, when it has one. */
  name: string | null
  /** With --all-projects: the project it belongs to, as shown (its folder, shortened), and its folder. */
  project: string | null
  projectDir: string | null
  agent: string
  /** As `session list` shows it: "RUNNING", "RUNNING (orphaned)", "COMPLETED (foreign)". */
  status: string
  /** The bare status (RUNNING, PAUSED, ...), for colours and counts. */
  statusCode: string
  /** The agent's state read from its tmux screen (busy, waiting, idle, unknown); '' when there is none. */
  state: string
  /** Hosted in tmux: enter attaches, `s` types into it. */
  tmux: boolean
  createdAt: string
  /** What it cost so far (and its budget), as `list` shows it; '-' when nothing is known. */
  cost: string
  task: string
  branch: string
}

export interface Listing {
  sessions: DashboardSession[]
  /** Records that could not be read, projects that could not be listed: shown, never fatal. */
  warnings: string[]
}

/** The lower pane: what the selected session changed, its last log lines, its checkpoints. */
export interface DashboardDetail {
  id: string
  /** `git diff --stat` lines, or why there is none. */
  diff: string[]
  log: string[]
  checkpoints: string[]
}

/** How an action ended: its message (what the command would have printed), or its error as the command shows it. */
export type ActionResult = { ok: true; message: string } | { ok: false; error: string }

/** Text to read in the pager (a diff, a log, a merge's dry run). */
export type TextResult = { ok: true; title: string; lines: string[] } | { ok: false; error: string }

/** A log to show: its last lines, and whether the session still runs (a follow goes on while it does). */
export type LogResult = { ok: true; lines: string[]; running: boolean } | { ok: false; error: string }

/** A merge's dry run, and whether the merge itself may go ahead. */
export type MergePreview = { ok: true; lines: string[]; canMerge: boolean } | { ok: false; error: string }

/** The `n` form's answer. */
export interface NewSession {
  agent: string
  task: string
  backend: string
  /** Started in the background (`run --detach`) or in a tmux session (`run --tmux`). */
  host: 'detached' | 'tmux'
}

export interface DashboardPort {
  /** What the header names: the project's folder, or "all projects". */
  readonly title: string
  readonly allProjects: boolean
  /** Colours, unless NO_COLOR or --no-color. */
  readonly color: boolean
  /** The agents `n` offers (the configured ones included) and the backends. */
  readonly agents: string[]
  readonly backends: string[]
  sessions(): Promise<Listing>
  /** Calls `onChange` when a record changes (fs.watch, a poll only where watching fails); returns the stop. */
  watch(onChange: () => void): () => void
  detail(session: DashboardSession): Promise<DashboardDetail>
  log(session: DashboardSession, lines: number): Promise<LogResult>
  diff(session: DashboardSession): Promise<TextResult>
  stop(session: DashboardSession, verb: 'kill' | 'pause'): Promise<ActionResult>
  resume(session: DashboardSession): Promise<ActionResult>
  mergePreview(session: DashboardSession): Promise<MergePreview>
  merge(session: DashboardSession): Promise<ActionResult>
  send(session: DashboardSession, text: string): Promise<ActionResult>
  start(request: NewSession): Promise<ActionResult>
  /** Runs with the terminal handed over (the dashboard is not drawn meanwhile). */
  attach(session: DashboardSession): Promise<ActionResult>
}
