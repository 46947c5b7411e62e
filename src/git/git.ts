import { dirname, join, resolve } from 'node:path'
import { pathExists } from '../disk/door.js'
import { diskFaultInText, ExternalToolError } from '../errors.js'
import { runCaptured } from '../runtime.js'
import { gitDeadlineMs, guardedArgs, SAFE_GIT_CONFIG, subcommandIndex } from './rules.js'

/**
 * The only place that runs git (docs/development/design.md, "Layers"): a `Git` is git bound to a directory of a repository
 * and an environment, and every operation in src/git/ runs through one. Arguments are always an array; callers
 * put user-supplied values after `--` or in `--opt=value` form so they never start a flag position.
 */
export interface GitResult {
  stdout: string
  stderr: string
  exitCode: number
}

/** Every operation in src/git accepts the environment to run git with (tests pass an isolated one). */
export interface GitEnvOptions {
  env: NodeJS.ProcessEnv
  /**
   * Where temporary index files go: `.harness/tmp/` of the project (swept of a killed process's leftovers
   * by the next one); without it the system's temp folder.
   */
  tempDir?: string
  /**
   * Aborts every git call made with these options (a run's end, given up when a stop is requested): the git
   * running is stopped and the call rejects with an AbortError.
   */
  signal?: AbortSignal
}

export interface GitCallOptions {
  /** Written to git's stdin. */
  input?: string
  signal?: AbortSignal
}

// Set by git for hooks; inherited, they would point our commands at another repository or index.
const LOCATION_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_PREFIX',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
]

export { SAFE_GIT_CONFIG } from './rules.js'

/** The one summary of a git failure: its fatal/error line, else its last line, else its exit code. */
export function gitDetail(result: Pick<GitResult, 'stderr' | 'exitCode'>): string {
  const lines = result.stderr.trim().split('\n').filter(Boolean)
  const fatal = lines.find((line) => line.startsWith('fatal: ') || line.startsWith('error: '))
  return (fatal ?? lines.pop() ?? `exit code ${result.exitCode}`).replace(/^(fatal|error): /, '')
}

/** The subcommand of an argument list (after `-c key=value` and global flags), for error messages. */
function subcommand(args: string[]): string {
  return args[subcommandIndex(args)] ?? ''
}

/** The one error of a git command that failed: `git <subcommand> failed: <summary>` (exit 5, GIT_FAILED). */
export function gitFailed(
  args: string[],
  result: GitResult,
  hint?: string,
  cause?: unknown,
): ExternalToolError {
  return new ExternalToolError(
    `git ${subcommand(args)} failed: ${gitDetail(result)}`,
    hint,
    'GIT_FAILED',
    cause,
  )
}

/**
 * git bound to a directory and an environment. The environment is the caller's (never this process's), with
 * git's location variables stripped (`extraEnv`, such as a temporary GIT_INDEX_FILE, is added after that).
 */
export class Git {
  constructor(
    readonly cwd: string,
    readonly env: NodeJS.ProcessEnv,
    private readonly extraEnv: NodeJS.ProcessEnv = {},
    /** Aborts every call of this Git (GitEnvOptions.signal). */
    readonly signal?: AbortSignal,
  ) {}

  /** The same environment in another directory (a worktree, the repository's top). */
  at(cwd: string): Git {
    return new Git(cwd, this.env, this.extraEnv, this.signal)
  }

  /** With variables added after the location variables are stripped (a temporary index, an identity). */
  with(extraEnv: NodeJS.ProcessEnv): Git {
    return new Git(this.cwd, this.env, { ...this.extraEnv, ...extraEnv }, this.signal)
  }

  /** Runs git; a non-zero exit is a `gitFailed` error. */
  async run(args: string[], options: GitCallOptions = {}): Promise<GitResult> {
    const result = await this.try(args, options)
    if (result.exitCode !== 0) {
      // A full disk is DISK_FULL (exit 1) whichever git command met it, not a failure of git.
      throw diskFaultInText(result.stderr, this.cwd) ?? gitFailed(args, result, undefined, result.error)
    }
    return result
  }

  /**
   * Runs git under the rules of rules.ts and returns whatever it exits with. Git missing, an abort, a git past
   * its deadline (GIT_TIMEOUT, exit 5) and a call the rules refuse still throw.
   */
  async try(args: string[], options: GitCallOptions = {}): Promise<GitResult & { error?: Error }> {
    const signals = [options.signal, this.signal].filter((s): s is AbortSignal => s !== undefined)
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
    const argv = [...SAFE_GIT_CONFIG, ...guardedArgs(args)]
    const deadlineMs = gitDeadlineMs(this.env)
    const result = await spawnGit(argv, this.cwd, this.gitEnv(), { input: options.input, signal, deadlineMs })
    if (result === 'timeout') throw gitTimedOut(args, deadlineMs)
    return result
  }

  /** stdout of a command that must succeed, trimmed. */
  async text(args: string[], options: GitCallOptions = {}): Promise<string> {
    return (await this.run(args, options)).stdout.trim()
  }

  /** The non-empty lines of a command that must succeed. */
  async lines(args: string[], options: GitCallOptions = {}): Promise<string[]> {
    return (await this.run(args, options)).stdout.split('\n').filter(Boolean)
  }

  /** The NUL-separated fields of a command that must succeed (`-z` output). */
  async fields(args: string[], options: GitCallOptions = {}): Promise<string[]> {
    return splitZ((await this.run(args, options)).stdout)
  }

  /** A yes/no question: exit 0 is yes, 1 is no, anything else a `gitFailed` error. */
  async check(args: string[], options: GitCallOptions = {}): Promise<boolean> {
    const result = await this.try(args, options)
    if (result.exitCode === 0) return true
    if (result.exitCode === 1) return false
    throw gitFailed(args, result, undefined, result.error)
  }

  private gitEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...this.env }
    for (const key of LOCATION_VARS) delete env[key]
    return { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...this.extraEnv }
  }
}

/** git in `cwd` with the caller's environment. */
export function gitAt(cwd: string, options: GitEnvOptions): Git {
  return new Git(cwd, options.env, {}, options.signal)
}

/** NUL-separated output without the empty tail. */
export function splitZ(stdout: string): string[] {
  return stdout.split('\0').filter((part) => part !== '')
}

/** The most output one git call may give (as node's `maxBuffer`): past it git is stopped and the call failed. */
const MAX_OUTPUT = 256 * 1024 * 1024

function gitMissing(cause: unknown): ExternalToolError {
  return new ExternalToolError('git is not installed or not on PATH', 'install git', 'GIT_MISSING', cause)
}

/** A git that did not finish within its deadline: stopped, and said so (exit 5, GIT_TIMEOUT). */
function gitTimedOut(args: string[], deadlineMs: number): ExternalToolError {
  const seconds = Math.round(deadlineMs / 1000)
  return new ExternalToolError(
    `git ${subcommand(args)} did not finish within ${seconds} s and was stopped`,
    'something in the repository may block git (a FIFO where a file or ref should be, a filter that never ends); HARNESS_GIT_TIMEOUT sets the limit',
    'GIT_TIMEOUT',
  )
}

interface SpawnOptions {
  input?: string
  signal?: AbortSignal
  deadlineMs: number
}

type Spawned = (GitResult & { error?: Error }) | 'timeout'

/** git with `argv`, run to its end or its deadline (runtime.ts runs it in whichever runtime harness runs on). */
async function spawnGit(
  argv: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: SpawnOptions,
): Promise<Spawned> {
  try {
    return await runCaptured(['git', ...argv], { cwd, env, ...options, maxOutput: MAX_OUTPUT })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw gitMissing(error)
    throw error
  }
}

/** `git rev-parse --git-common-dir` made absolute, or null outside a repository. */
export async function gitCommonDir(cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (!hasDotGitAbove(cwd)) return null
  try {
    const result = await new Git(cwd, env).try(['rev-parse', '--path-format=absolute', '--git-common-dir'])
    if (result.exitCode !== 0) return null
    return result.stdout.trim() || null
  } catch (error) {
    if (error instanceof ExternalToolError) return null
    throw error
  }
}

/**
 * Whether `dir` or a folder above it holds a `.git` (a folder, or a file as in linked worktrees). Without one
 * git finds no repository (the location variables are stripped), so none needs asking.
 */
export function hasDotGitAbove(dir: string): boolean {
  for (let current = resolve(dir); ; current = dirname(current)) {
    if (pathExists(join(current, '.git'))) return true
    if (dirname(current) === current) return false
  }
}
