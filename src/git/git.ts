import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { ExternalToolError } from '../errors.js'

/**
 * The only place that runs git. Arguments are always an array; callers put user-supplied values after `--`
 * or in `--opt=value` form so they never start a flag position.
 */
export interface GitResult {
  stdout: string
  stderr: string
  exitCode: number
}

export interface GitOptions {
  cwd: string
  /** The environment git runs with: the caller's (never this process's by default). */
  env: NodeJS.ProcessEnv
  /** Added after the location variables are stripped (e.g. a temporary GIT_INDEX_FILE). */
  extraEnv?: NodeJS.ProcessEnv
  /** Non-zero exit is returned instead of thrown. */
  allowFailure?: boolean
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
]

function gitEnv(options: GitOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...options.env }
  for (const key of LOCATION_VARS) delete env[key]
  return { ...env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...options.extraEnv }
}

/** The one summary of a git failure: its fatal/error line, else its last line, else its exit code. */
export function gitDetail(result: Pick<GitResult, 'stderr' | 'exitCode'>): string {
  const lines = result.stderr.trim().split('\n').filter(Boolean)
  const fatal = lines.find((line) => line.startsWith('fatal: ') || line.startsWith('error: '))
  return (fatal ?? lines.pop() ?? `exit code ${result.exitCode}`).replace(/^(fatal|error): /, '')
}

export async function git(args: string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      {
        cwd: options.cwd,
        env: gitEnv(options),
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'utf8',
        signal: options.signal,
      },
      (error, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === 'string') {
          const code = (error as NodeJS.ErrnoException).code
          if (code === 'ENOENT') {
            reject(
              new ExternalToolError(
                'git is not installed or not on PATH',
                'install git',
                'GIT_MISSING',
                error,
              ),
            )
            return
          }
          if (code === 'ABORT_ERR') {
            reject(error)
            return
          }
        }
        const exitCode = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        if (exitCode !== 0 && !options.allowFailure) {
          const detail = gitDetail({ stderr, exitCode })
          reject(
            new ExternalToolError(`git ${args[0] ?? ''} failed: ${detail}`, undefined, 'GIT_FAILED', error),
          )
          return
        }
        resolve({ stdout, stderr, exitCode })
      },
    )
    if (options.input !== undefined) child.stdin?.end(options.input)
  })
}

/** `git rev-parse --git-common-dir` made absolute, or null outside a repository. */
export async function gitCommonDir(cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (!hasDotGitAbove(cwd)) return null
  try {
    const result = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd,
      env,
      allowFailure: true,
    })
    if (result.exitCode !== 0) return null
    return result.stdout.trim() || null
  } catch (error) {
    if (error instanceof ExternalToolError) return null
    throw error
  }
}

/**
 * Whether `dir` or a folder above it holds a `.git` (a folder, or a file as in linked worktrees). Without one
 * git finds no repository (the location variables are stripped, see `gitEnv`), so none needs asking.
 */
export function hasDotGitAbove(dir: string): boolean {
  for (let current = resolve(dir); ; current = dirname(current)) {
    if (existsSync(join(current, '.git'))) return true
    if (dirname(current) === current) return false
  }
}
