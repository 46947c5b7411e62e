import { basename, dirname, join, resolve } from 'node:path'
import { realPathNative } from '../disk/door.js'
import { UsageError } from '../errors.js'
import { type GitEnvOptions, gitAt, gitFailed } from './git.js'

/**
 * The object `expr` names (`<rev>^{commit}`, `<rev>^{tree}`), or null when it names none. The one lookup of
 * "does this exist, and what is it"; `resolveCommit` is the one that turns a miss into the user's error.
 */
export async function revParseOrNull(
  repo: string,
  expr: string,
  options: GitEnvOptions,
): Promise<string | null> {
  const result = await gitAt(repo, options).try([
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    expr,
  ])
  return result.exitCode === 0 ? result.stdout.trim() : null
}

/** Whether `commit` names a commit present in the repository. */
export async function hasCommit(repo: string, commit: string, options: GitEnvOptions): Promise<boolean> {
  assertRefArg(commit, 'commit')
  return (await revParseOrNull(repo, `${commit}^{commit}`, options)) !== null
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
  const check = await gitAt(cwd, options).try(['check-ref-format', `refs/heads/${name}`])
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
  const check = ref.startsWith('refs/') ? await gitAt(cwd, options).try(['check-ref-format', ref]) : undefined
  if (check?.exitCode !== 0) {
    throw new UsageError(
      `invalid ref name "${ref}": expected a full name under refs/`,
      undefined,
      'INVALID_REF',
    )
  }
}

/**
 * The commit a user-supplied revision names. A name a branch has is that branch (`refs/heads/<name>`), whatever
 * else has that name: git's own order (refs/<name>, refs/tags/<name>, then refs/heads/<name>) would let a tag
 * called `develop` shadow the branch `develop`. A revision that does not exist is the user's mistake (exit 2);
 * git failing for another reason (not a repository, corrupt objects) is exit 5.
 */
export async function resolveCommit(repo: string, ref: string, options: GitEnvOptions): Promise<string> {
  assertRefArg(ref, 'revision')
  const git = gitAt(repo, options)
  if (branchFirst(ref)) {
    const branch = await revParseOrNull(repo, `refs/heads/${ref}^{commit}`, options)
    if (branch) return branch
  }
  const args = ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]
  const result = await git.try(args)
  if (result.exitCode === 0) return result.stdout.trim()
  if (result.exitCode !== 1) throw gitFailed(args, result)
  const hasHead = await git.try(['rev-parse', '--verify', '--quiet', 'HEAD'])
  throw new UsageError(
    `unknown revision "${ref}": not a commit in this repository`,
    hasHead.exitCode === 0
      ? 'name a branch, tag or commit that exists (see "git branch -a" and "git log")'
      : 'the repository has no commits yet: make a first commit',
    'UNKNOWN_REF',
  )
}

/**
 * Whether `ref` may start with a branch's name, to be looked up as `refs/heads/<ref>` first (`develop`,
 * `develop~2`): not a full name, HEAD, a full commit id or a revision that names no ref (`:/text`, `@{-1}`).
 */
function branchFirst(ref: string): boolean {
  if (ref.startsWith('refs/') || ref.startsWith(':') || ref.startsWith('@')) return false
  if (/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/.test(ref)) return false
  return !/^HEAD(?:$|[~^@])/.test(ref)
}

/** Compares paths the way the filesystem sees them (symlinked temp dirs, trailing slashes). */
export function samePath(a: string, b: string): boolean {
  return canonicalPath(a) === canonicalPath(b)
}

/** The real path of `path`, or of its nearest existing ancestor with the rest appended (for removed dirs). */
export function canonicalPath(path: string): string {
  const abs = resolve(path)
  try {
    return realPathNative(abs)
  } catch {
    const parent = dirname(abs)
    return parent === abs ? abs : join(canonicalPath(parent), basename(abs))
  }
}
