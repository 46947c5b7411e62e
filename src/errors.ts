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

/** Every error harness means to show carries an exit code, a stable code string and an optional hint. */
export class HarnessError extends Error {
  constructor(
    readonly code: string,
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
  constructor(message: string, hint?: string, code = 'USAGE') {
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
  constructor(message: string, hint?: string, code = 'ILLEGAL_STATE') {
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
  constructor(message: string, hint?: string, code = 'EXTERNAL_TOOL_FAILED', cause?: unknown) {
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
