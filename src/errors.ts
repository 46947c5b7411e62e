/** The exit codes of README.md ("Exit codes"). The agent's own code and 128+n are passed through as numbers. */
export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  NotFound: 3,
  IllegalState: 4,
  ExternalTool: 5,
  /** The session reached its budget and was paused (docs/budgets.md). */
  BudgetReached: 6,
  Timeout: 124,
} as const

/**
 * Every error code harness shows (the `code` of a JSON error, README.md "Exit codes"), with the exit code it
 * comes with and what it means. Scripts match these strings: a code never changes once shipped. Every
 * HarnessError's code is one of them (the type says so), and test/unit/errors.test.ts checks that each is
 * used, and thrown with its exit code.
 */
export const ERROR_CODES = {
  AGENT_NOT_FOUND: {
    exit: ExitCode.ExternalTool,
    meaning: "the agent's command is not installed or not executable",
  },
  ALREADY_MERGED: {
    exit: ExitCode.IllegalState,
    meaning: 'the session was merged before and has no work since',
  },
  AMBIGUOUS_SESSION_ID: { exit: ExitCode.Usage, meaning: 'an id prefix names more than one session' },
  ARCHIVE_CONFLICT: {
    exit: ExitCode.IllegalState,
    meaning: 'unarchiving would overwrite a file that is already there',
  },
  ARCHIVE_CORRUPT: { exit: ExitCode.Failure, meaning: "an archive's bytes or manifest do not check out" },
  BACKEND_UNSUPPORTED: {
    exit: ExitCode.Usage,
    meaning: 'the chosen backend cannot do what the command asks (docs/backends.md)',
  },
  BAD_KEY: { exit: ExitCode.Failure, meaning: "the user's sealing key is unreadable or malformed" },
  BASE_MISSING: { exit: ExitCode.IllegalState, meaning: 'the base branch a session started from is gone' },
  BRANCH_CHECKED_OUT: {
    exit: ExitCode.IllegalState,
    meaning: 'the branch is checked out in another worktree',
  },
  BRANCH_EXISTS: { exit: ExitCode.IllegalState, meaning: 'a branch of that name exists already' },
  BRANCH_MISSING: { exit: ExitCode.IllegalState, meaning: "the session's branch is gone" },
  BRANCH_MOVED: {
    exit: ExitCode.IllegalState,
    meaning: 'a branch moved under harness (someone else committed)',
  },
  BUDGET_NEEDS_HEADLESS: { exit: ExitCode.Usage, meaning: 'a budget needs a headless run' },
  BUDGET_NEEDS_PRICING: { exit: ExitCode.Usage, meaning: "a budget needs the model's price in the config" },
  // A --budget given at or below what is spent is a usage error; a stored budget already spent, a state.
  BUDGET_SPENT: {
    exit: [ExitCode.Usage, ExitCode.IllegalState],
    meaning: 'the budget is already spent',
  },
  BUDGET_UNMEASURABLE: {
    exit: ExitCode.Usage,
    meaning: 'the agent reports no cost or tokens to hold a budget to',
  },
  BUNDLE_UNUSABLE: {
    exit: ExitCode.IllegalState,
    meaning: "an archive's git bundle cannot be applied to this repository",
  },
  CHAIN_EXISTS: { exit: ExitCode.IllegalState, meaning: 'a chain of that name exists already' },
  CHAIN_NOT_FOUND: { exit: ExitCode.NotFound, meaning: 'no chain of that name' },
  CHAIN_NOT_RUNNING: { exit: ExitCode.IllegalState, meaning: 'the chain has no runner to stop' },
  CHAIN_RUNNING: { exit: ExitCode.IllegalState, meaning: "the chain's runner is still alive" },
  CHAIN_TOO_BIG: { exit: ExitCode.Failure, meaning: "a chain's file would be over its size limit" },
  CHAIN_UNVERIFIED: {
    exit: ExitCode.IllegalState,
    meaning: "the chain's runner cannot be proven to be the process named",
  },
  CHECKPOINT_MISSING: {
    exit: ExitCode.IllegalState,
    meaning: "a checkpoint's commit is gone from the repository",
  },
  CHECKPOINT_NOT_FOUND: { exit: ExitCode.Usage, meaning: 'no checkpoint of that number' },
  CONFIG_KEY_NOT_SET: { exit: ExitCode.IllegalState, meaning: 'the config key to unset is not set' },
  CONFIRMATION_REQUIRED: { exit: ExitCode.Usage, meaning: 'the command needs --yes where it cannot ask' },
  CONTROL_CHARACTER: { exit: ExitCode.Usage, meaning: 'text to type holds a control character' },
  CORRUPT_CHAIN: { exit: ExitCode.Failure, meaning: "a chain's file does not parse or check" },
  CORRUPT_RECORD: {
    exit: ExitCode.Failure,
    meaning: 'a session record does not parse or check (left untouched)',
  },
  DISK_FULL: { exit: ExitCode.Failure, meaning: 'the disk or quota is full (the old file is intact)' },
  ENGINE_FAILED: { exit: ExitCode.ExternalTool, meaning: 'the container engine failed' },
  ENGINE_MISSING: { exit: ExitCode.ExternalTool, meaning: 'no container engine is installed' },
  ENGINE_TIMEOUT: { exit: ExitCode.ExternalTool, meaning: 'the container engine did not answer in time' },
  EXTERNAL_TOOL_FAILED: { exit: ExitCode.ExternalTool, meaning: 'a program harness ran failed' },
  FILE_TOO_BIG: { exit: ExitCode.IllegalState, meaning: 'a file under .harness is over its size limit' },
  FOREIGN: {
    exit: ExitCode.IllegalState,
    meaning: 'the record or chain is not sealed by this user for this project',
  },
  GIT_FAILED: { exit: ExitCode.ExternalTool, meaning: 'git failed' },
  GIT_MISSING: { exit: ExitCode.ExternalTool, meaning: 'git is not installed' },
  GIT_TIMEOUT: { exit: ExitCode.ExternalTool, meaning: 'git did not finish in time and was stopped' },
  HARNESS_NOT_A_FOLDER: { exit: ExitCode.Usage, meaning: '.harness is not a folder' },
  ILLEGAL_STATE: { exit: ExitCode.IllegalState, meaning: "the session's state does not allow the command" },
  ILLEGAL_TRANSITION: {
    exit: ExitCode.IllegalState,
    meaning: "the session's status does not allow the change",
  },
  IMAGE_MISSING: { exit: ExitCode.Usage, meaning: 'a container session needs an image' },
  INVALID_AGENT_SESSION_ID: {
    exit: ExitCode.IllegalState,
    meaning: "an agent's own session id is malformed",
  },
  INVALID_BRANCH: { exit: ExitCode.Usage, meaning: 'not a valid branch name' },
  INVALID_BUDGET: { exit: ExitCode.Usage, meaning: 'not a valid --budget amount' },
  INVALID_CHAIN_NAME: { exit: ExitCode.Usage, meaning: 'not a valid chain name' },
  INVALID_CONFIG: { exit: ExitCode.Usage, meaning: 'a config file is malformed' },
  INVALID_DIR: { exit: ExitCode.Usage, meaning: '--dir names no project folder' },
  INVALID_DURATION: { exit: ExitCode.Usage, meaning: 'not a valid duration' },
  INVALID_INCLUDE: { exit: ExitCode.Usage, meaning: 'not a valid worktree.include pattern' },
  INVALID_NAME: { exit: ExitCode.Usage, meaning: 'not a valid session name' },
  INVALID_REF: { exit: ExitCode.Usage, meaning: 'not a valid git ref or revision' },
  INVALID_SESSION_ID: { exit: ExitCode.Usage, meaning: 'not a valid session id' },
  IO_ERROR: { exit: ExitCode.Failure, meaning: "an I/O error while writing harness's files" },
  LOCK_BUSY: { exit: ExitCode.Failure, meaning: 'another harness command holds the lock' },
  MAIN_DIRTY: { exit: ExitCode.IllegalState, meaning: 'the main worktree has uncommitted changes' },
  MAIN_WORKTREE: { exit: ExitCode.IllegalState, meaning: 'the main worktree is never removed' },
  MERGE_CONFLICT: { exit: ExitCode.IllegalState, meaning: 'the merge would conflict (nothing changed)' },
  MERGE_FAILED: { exit: ExitCode.IllegalState, meaning: 'git could not complete the merge' },
  MESSAGE_TOO_LONG: { exit: ExitCode.Usage, meaning: 'a checkpoint message is too long' },
  MISSING_COMMAND: { exit: ExitCode.Usage, meaning: 'exec needs a command after --' },
  MISSING_PROMPT: { exit: ExitCode.Usage, meaning: 'no prompt was given' },
  NAME_TAKEN: { exit: ExitCode.IllegalState, meaning: 'another session has that name' },
  NOTHING_TO_DIFF: {
    exit: ExitCode.IllegalState,
    meaning: 'neither the worktree nor the branch is there to compare',
  },
  NOT_A_TERMINAL: { exit: ExitCode.Usage, meaning: 'the command needs a terminal' },
  NOT_A_WORKTREE: { exit: ExitCode.IllegalState, meaning: "the folder is not the session's git worktree" },
  NOT_IN_TMUX: { exit: ExitCode.IllegalState, meaning: 'the session does not run in tmux' },
  NO_BASE_BRANCH: { exit: ExitCode.IllegalState, meaning: 'the session has no base branch to merge into' },
  NO_BRANCH: { exit: ExitCode.IllegalState, meaning: 'the session has no branch' },
  NO_GIT: { exit: ExitCode.IllegalState, meaning: 'the session is not in a git repository' },
  NO_LOG: { exit: ExitCode.IllegalState, meaning: 'the session has no log yet' },
  NO_MAIN_WORKTREE: { exit: ExitCode.IllegalState, meaning: 'the repository has no main worktree' },
  PATH_REFUSED: {
    exit: ExitCode.IllegalState,
    meaning: "the session's folder is not one harness gives to a shell",
  },
  PLAN_INVALID: { exit: ExitCode.Usage, meaning: 'the run plan handed to a supervisor does not parse' },
  PROMPT_TOO_LONG: { exit: ExitCode.Usage, meaning: 'the prompt is over its size limit' },
  READ_ONLY: { exit: ExitCode.Failure, meaning: 'the file system is read-only' },
  RECORD_INVALID: {
    exit: ExitCode.Failure,
    meaning: 'a record would not check after an update (not written)',
  },
  RECORD_TOO_BIG: { exit: ExitCode.Failure, meaning: 'a record would be over its size limit (not written)' },
  REFUSED_AS_ROOT: { exit: ExitCode.Usage, meaning: 'an autonomous agent is not run as root' },
  REF_EXISTS: { exit: ExitCode.IllegalState, meaning: 'a snapshot ref exists already' },
  RESUME_NOT_EXACT: {
    exit: ExitCode.IllegalState,
    meaning: 'the agent cannot resume its own conversation exactly',
  },
  SESSION_ALIVE: { exit: ExitCode.IllegalState, meaning: "the session's agent is still alive" },
  SESSION_BUSY: { exit: ExitCode.IllegalState, meaning: 'another command is working on the session' },
  SESSION_CHANGED: {
    exit: ExitCode.IllegalState,
    meaning: 'the session changed while the command looked at it',
  },
  SESSION_EXISTS: { exit: ExitCode.IllegalState, meaning: 'a session of that id exists already' },
  SESSION_GONE: { exit: ExitCode.IllegalState, meaning: "the session's record went away meanwhile" },
  SESSION_ID_CLASH: {
    exit: ExitCode.IllegalState,
    meaning: "the id asked for clashes with an existing session's",
  },
  SESSION_KEPT: { exit: ExitCode.IllegalState, meaning: 'the session is kept (not removed without --force)' },
  SESSION_NOT_FOUND: { exit: ExitCode.NotFound, meaning: 'no session of that id' },
  SESSION_NOT_RUNNING: { exit: ExitCode.IllegalState, meaning: 'the session is not running' },
  SESSION_RUNNING: { exit: ExitCode.IllegalState, meaning: 'the session is running' },
  SESSION_UNVERIFIED: {
    exit: ExitCode.IllegalState,
    meaning: "the session's processes cannot be proven to be its own",
  },
  SETUP_FAILED: { exit: ExitCode.ExternalTool, meaning: 'worktree.setup failed' },
  SLURM_FAILED: { exit: ExitCode.ExternalTool, meaning: 'a Slurm command failed' },
  SLURM_MISSING: { exit: ExitCode.ExternalTool, meaning: "Slurm's client commands are not installed" },
  SLURM_OPTION_REFUSED: { exit: ExitCode.Usage, meaning: 'a Slurm option harness does not pass on' },
  SLURM_SPOOL_INVALID: { exit: ExitCode.Usage, meaning: 'slurm.spool is not a usable folder' },
  SLURM_SPOOL_IN_REPOSITORY: { exit: ExitCode.Usage, meaning: 'slurm.spool is inside the repository' },
  SLURM_SPOOL_MISSING: { exit: ExitCode.Usage, meaning: 'slurm.spool is not set' },
  SLURM_SPOOL_UNSAFE: {
    exit: ExitCode.IllegalState,
    meaning: 'slurm.spool holds something harness will not use',
  },
  SLURM_TIMEOUT: { exit: ExitCode.ExternalTool, meaning: 'a Slurm command did not answer in time' },
  SLURM_UNREACHABLE: { exit: ExitCode.ExternalTool, meaning: 'the Slurm controller does not answer' },
  SNAPSHOT_FAILED: {
    exit: ExitCode.IllegalState,
    meaning: 'the work could not be snapshotted before removal',
  },
  SUPERVISOR_FAILED: { exit: ExitCode.ExternalTool, meaning: 'the supervisor could not be started' },
  SYMLINK_REFUSED: {
    exit: ExitCode.IllegalState,
    meaning: 'a link where harness expects a real file or folder',
  },
  TMUX_FAILED: { exit: ExitCode.ExternalTool, meaning: 'tmux failed' },
  TMUX_NOT_FOUND: { exit: ExitCode.ExternalTool, meaning: 'tmux is not installed' },
  TMUX_SESSION_EXISTS: {
    exit: ExitCode.IllegalState,
    meaning: 'a tmux session of that name exists already',
  },
  TMUX_SESSION_GONE: { exit: ExitCode.IllegalState, meaning: "the session's tmux session is gone" },
  UNCOLLECTED_WORK: {
    exit: ExitCode.IllegalState,
    meaning: "a container session's commits are not collected yet",
  },
  UNKNOWN_CONFIG_KEY: { exit: ExitCode.Usage, meaning: 'no config key of that name' },
  UNKNOWN_PROVIDER: { exit: ExitCode.Usage, meaning: 'no agent of that name' },
  UNKNOWN_REF: { exit: ExitCode.Usage, meaning: 'git knows no such revision' },
  UNSAFE_FILE: { exit: ExitCode.IllegalState, meaning: 'not a plain file where harness expects one' },
  UNSAFE_PATH: { exit: ExitCode.IllegalState, meaning: 'a path harness keeps its files under is not safe' },
  UNSAFE_PROJECT: { exit: ExitCode.IllegalState, meaning: 'the project folder is not one harness trusts' },
  UNSUPPORTED_MODEL: { exit: ExitCode.Usage, meaning: 'the agent does not take a model' },
  UNSUPPORTED_PERMISSION: {
    exit: ExitCode.Usage,
    meaning: 'the agent does not support that permission mode',
  },
  UNTRUSTED_CONFIG: { exit: ExitCode.IllegalState, meaning: 'the project config is not trusted yet' },
  USAGE: { exit: ExitCode.Usage, meaning: 'the command line is wrong' },
  WAIT_TIMEOUT: { exit: ExitCode.Timeout, meaning: 'the wait ran out of time' },
  WORKTREE_DIRTY: { exit: ExitCode.IllegalState, meaning: 'the worktree has uncommitted changes' },
  WORKTREE_EXISTS: { exit: ExitCode.IllegalState, meaning: 'a worktree is registered there already' },
  WORKTREE_GONE: { exit: ExitCode.IllegalState, meaning: "the session's worktree is gone" },
  WORKTREE_LOCKED: { exit: ExitCode.IllegalState, meaning: 'the worktree is locked' },
  WORKTREE_MISSING: { exit: ExitCode.IllegalState, meaning: "the session's worktree is missing" },
  WORKTREE_NOT_OURS: { exit: ExitCode.IllegalState, meaning: 'the folder is not the worktree harness made' },
  WORKTREE_PATH_EXISTS: { exit: ExitCode.IllegalState, meaning: "the worktree's folder exists already" },
  WORKTREE_ROLLBACK_FAILED: {
    exit: ExitCode.ExternalTool,
    meaning: 'a failed worktree could not be fully undone',
  },
  WRONG_BRANCH: { exit: ExitCode.IllegalState, meaning: 'the main worktree is not on the base branch' },
} as const

export type ErrorCode = keyof typeof ERROR_CODES

/** Every error harness means to show carries an exit code, a stable code string and an optional hint. */
export class HarnessError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly exitCode: number = ExitCode.Failure,
    readonly hint?: string,
    /** What went wrong underneath (a spawn error, a file call): kept for debugging, never shown as such. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = new.target.name
  }

  /** Lines shown under the one-line message, as lines (the tail of a failed tool's output). */
  details?: string[]
}

export class UsageError extends HarnessError {
  constructor(message: string, hint?: string, code: ErrorCode = 'USAGE') {
    super(code, message, ExitCode.Usage, hint)
  }
}

export class InvalidSessionIdError extends UsageError {
  constructor(id: string, reason: string) {
    super(
      `invalid session id "${id}": ${reason}`,
      'ids are letters, digits, "_" and "-", up to 64 characters',
      'INVALID_SESSION_ID',
    )
  }
}

export class SessionNotFoundError extends HarnessError {
  constructor(id: string, hint = 'run "harness session list" to see sessions') {
    super('SESSION_NOT_FOUND', `session "${id}" not found`, ExitCode.NotFound, hint)
  }
}

export class AmbiguousSessionIdError extends HarnessError {
  constructor(
    prefix: string,
    readonly candidates: string[],
  ) {
    super(
      'AMBIGUOUS_SESSION_ID',
      `session id prefix "${prefix}" is ambiguous: ${candidates.join(', ')}`,
      ExitCode.Usage,
      'give more characters of the id',
    )
  }
}

export class SessionExistsError extends HarnessError {
  constructor(id: string) {
    super('SESSION_EXISTS', `session "${id}" already exists`, ExitCode.IllegalState)
  }
}

export class IllegalTransitionError extends HarnessError {
  constructor(
    readonly from: string,
    readonly event: string,
    id?: string,
  ) {
    super(
      'ILLEGAL_TRANSITION',
      `${id ? `session "${id}": ` : ''}cannot ${event.replace(/-/g, ' ')} a session that is ${from}`,
      ExitCode.IllegalState,
    )
  }
}

export class IllegalStateError extends HarnessError {
  constructor(message: string, hint?: string, code: ErrorCode = 'ILLEGAL_STATE') {
    super(code, message, ExitCode.IllegalState, hint)
  }
}

export class LockTimeoutError extends HarnessError {
  constructor(what: string, holder: string) {
    super(
      'LOCK_BUSY',
      `${what} is locked by ${holder}`,
      ExitCode.Failure,
      'another harness command is updating it; try again',
    )
  }
}

export class CorruptRecordError extends HarnessError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(
      'CORRUPT_RECORD',
      `corrupt session record ${path}: ${reason}`,
      ExitCode.Failure,
      'the file was left untouched',
    )
  }
}

export class ExternalToolError extends HarnessError {
  constructor(message: string, hint?: string, code: ErrorCode = 'EXTERNAL_TOOL_FAILED', cause?: unknown) {
    super(code, message, ExitCode.ExternalTool, hint, cause)
  }
}

export class ConfigError extends HarnessError {
  constructor(file: string, detail: string, cause?: unknown) {
    super('INVALID_CONFIG', `invalid config ${file}: ${detail}`, ExitCode.Usage, undefined, cause)
  }
}

const DISK_FAULT_TEXT = {
  DISK_FULL: ['the disk is full', 'free some space (or raise the quota) and run the command again'],
  READ_ONLY: ['the file system is read-only', 'harness can only read this project here'],
  IO_ERROR: ['an I/O error occurred', 'check the disk; the file was left as it was'],
} as const

/** ENOSPC/EDQUOT, EROFS, EIO while writing harness's own files: one clear line, the old file intact. */
export class DiskFaultError extends HarnessError {
  constructor(
    readonly kind: keyof typeof DISK_FAULT_TEXT,
    readonly path: string,
    cause?: unknown,
  ) {
    const [what, hint] = DISK_FAULT_TEXT[kind]
    super(kind, `cannot write ${path}: ${what}`, ExitCode.Failure, hint, cause)
  }
}

const ERRNO_FAULTS: Record<string, keyof typeof DISK_FAULT_TEXT> = {
  ENOSPC: 'DISK_FULL',
  EDQUOT: 'DISK_FULL',
  EROFS: 'READ_ONLY',
  EIO: 'IO_ERROR',
}

/** The disk fault of an errno error met at `path`, or the error as it was. */
export function diskFaultOf(error: unknown, path: string): unknown {
  if (error instanceof DiskFaultError) return error
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const kind = code ? ERRNO_FAULTS[code] : undefined
  return kind ? new DiskFaultError(kind, path, error) : error
}

/**
 * The disk fault a child's error text reports (git prints strerror: "No space left on device"), or null:
 * ENOSPC/EDQUOT, EROFS and EIO are mapped here once, whichever tool met them.
 */
export function diskFaultInText(text: string, path: string): DiskFaultError | null {
  if (/No space left on device|Disk quota exceeded/i.test(text)) return new DiskFaultError('DISK_FULL', path)
  if (/Read-only file system/i.test(text)) return new DiskFaultError('READ_ONLY', path)
  if (/Input\/output error/i.test(text)) return new DiskFaultError('IO_ERROR', path)
  return null
}

/** Thrown to end the process with a given code without printing anything (e.g. the agent's own exit code). */
export class ExitRequest extends Error {
  constructor(
    readonly exitCode: number,
    readonly signal?: NodeJS.Signals,
  ) {
    super(`exit ${exitCode}`)
  }
}

/** The message of anything thrown, for a warning line. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * A word of a hint's command line as a shell reads it back: as it is when it holds nothing a shell would read
 * (`$`, spaces, quotes, globs), else single-quoted. Hints are pasted into shells.
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
}
