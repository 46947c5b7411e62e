import { realpathSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { ExternalToolError, UsageError } from '../errors.js'
import { type GitResult, git, gitDetail } from './git.js'

export { gitDetail }

/** Every operation in src/git accepts the environment to run git with (tests pass an isolated one). */
export interface GitEnvOptions {
  env: NodeJS.ProcessEnv
}

export interface RunOptions extends GitEnvOptions {
  allowFailure?: boolean
  input?: string
  signal?: AbortSignal
  /** Added after the location variables are stripped (e.g. a temporary GIT_INDEX_FILE). */
  extraEnv?: NodeJS.ProcessEnv
}

export function run(args: string[], cwd: string, options: RunOptions): Promise<GitResult> {
  return git(args, {
    cwd,
    env: options.env,
    extraEnv: options.extraEnv,
    allowFailure: options.allowFailure,
    input: options.input,
    signal: options.signal,
  })
}

/**
 * The object `expr` names (`<rev>^{commit}`, `<rev>^{tree}`), or null when it names none. The one lookup of
 * "does this exist, and what is it"; `resolveCommit` is the one that turns a miss into the user's error.
 */
export async function revParseOrNull(
  repo: string,
  expr: string,
  options: GitEnvOptions,
): Promise<string | null> {
  const result = await run(['rev-parse', '--verify', '--quiet', '--end-of-options', expr], repo, {
    ...options,
    allowFailure: true,
  })
  return result.exitCode === 0 ? result.stdout.trim() : null
}

/** NUL-separated output without the empty tail. */
export function splitZ(stdout: string): string[] {
  return stdout.split('\0').filter((part) => part !== '')
}

/**
 * A user-supplied ref, branch or revision must never be read by git as an option, and may not smuggle
 * line breaks into porcelain output.
 */
export function assertRefArg(value: string, what = 'ref'): void {
  if (value === '') throw new UsageError(`${what} must not be empty`, undefined, 'INVALID_REF')
  if (value.startsWith('-')) {
    throw new UsageError(`invalid ${what} "${value}": must not start with "-"`, undefined, 'INVALID_REF')
  }
  if (/[\0\r\n]/.test(value)) {
    throw new UsageError(
      `invalid ${what} ${JSON.stringify(value)}: control characters`,
      undefined,
      'INVALID_REF',
    )
  }
}

/** A name that `git branch` would accept. */
export async function assertBranchName(cwd: string, name: string, options: GitEnvOptions): Promise<void> {
  assertRefArg(name, 'branch name')
  // Components of letters, digits, `_` and `-` (harness/<id>, most names) are always valid: no git asked.
  if (name !== 'HEAD' && /^[A-Za-z0-9_][A-Za-z0-9_-]*(?:\/[A-Za-z0-9_-]+)*$/.test(name)) return
  const check = await run(['check-ref-format', `refs/heads/${name}`], cwd, { ...options, allowFailure: true })
  if (check.exitCode !== 0 || name === 'HEAD') {
    throw new UsageError(
      `invalid branch name "${name}"`,
      'see "git help check-ref-format" for what a branch name may hold',
      'INVALID_BRANCH',
    )
  }
}

/** A full ref name under refs/, e.g. refs/harness/<id>/checkpoints/1. */
export async function assertFullRefName(cwd: string, ref: string, options: GitEnvOptions): Promise<void> {
  assertRefArg(ref)
  const check = ref.startsWith('refs/')
    ? await run(['check-ref-format', ref], cwd, { ...options, allowFailure: true })
    : undefined
  if (check?.exitCode !== 0) {
    throw new UsageError(
      `invalid ref name "${ref}": expected a full name under refs/`,
      undefined,
      'INVALID_REF',
    )
  }
}

/**
 * The commit a user-supplied revision names. A revision that does not exist is the user's mistake (exit 2);
 * git failing for another reason (not a repository, corrupt objects) is exit 5.
 */
export async function resolveCommit(repo: string, ref: string, options: GitEnvOptions): Promise<string> {
  assertRefArg(ref, 'revision')
  const result = await run(
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`],
    repo,
    {
      ...options,
      allowFailure: true,
    },
  )
  if (result.exitCode === 0) return result.stdout.trim()
  if (result.exitCode === 1) {
    const hasHead = await run(['rev-parse', '--verify', '--quiet', 'HEAD'], repo, {
      ...options,
      allowFailure: true,
    })
    throw new UsageError(
      `unknown revision "${ref}": not a commit in this repository`,
      hasHead.exitCode === 0
        ? 'name a branch, tag or commit that exists (see "git branch -a" and "git log")'
        : 'the repository has no commits yet: make a first commit',
      'UNKNOWN_REF',
    )
  }
  throw new ExternalToolError(`git rev-parse failed: ${gitDetail(result)}`, undefined, 'GIT_FAILED')
}

/** Compares paths the way the filesystem sees them (symlinked temp dirs, trailing slashes). */
export function samePath(a: string, b: string): boolean {
  return canonicalPath(a) === canonicalPath(b)
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended (for removed dirs). */
export function canonicalPath(path: string): string {
  const abs = resolve(path)
  try {
    return realpathSync.native(abs)
  } catch {
    const parent = dirname(abs)
    return parent === abs ? abs : join(canonicalPath(parent), basename(abs))
  }
}
