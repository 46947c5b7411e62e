import { IllegalStateError } from '../errors.js'
import { assertRefArg } from './common.js'
import { type GitEnvOptions, gitAt, gitDetail, gitFailed } from './git.js'

/**
 * Writes a bundle of `refs` to `file`, without what `exclude` already holds (the session's base commit, which
 * stays in the repository). Returns false when there was nothing new to bundle (every ref at or below
 * `exclude`): git refuses an empty bundle, and the refs can then be recreated from their commits alone.
 */
export async function createBundle(
  repo: string,
  file: string,
  refs: string[],
  exclude: string | null,
  options: GitEnvOptions,
): Promise<boolean> {
  for (const ref of refs) assertRefArg(ref)
  if (exclude) assertRefArg(exclude, 'commit')
  const args = ['bundle', 'create', '-q', file, ...refs, ...(exclude ? ['--not', exclude] : [])]
  const result = await gitAt(repo, options).try(args)
  if (result.exitCode === 0) return true
  if (/empty bundle/i.test(result.stderr)) return false
  throw gitFailed(args, result)
}

/** Refuses a bundle that is damaged or whose prerequisites (the base commit it builds on) `repo` lacks. */
export async function verifyBundle(repo: string, file: string, options: GitEnvOptions): Promise<void> {
  const verify = await gitAt(repo, options).try(['bundle', 'verify', '-q', file])
  if (verify.exitCode !== 0) {
    throw new IllegalStateError(
      `the archive's bundle cannot be applied to ${repo}: ${gitDetail(verify)}`,
      'the repository lacks a commit the bundle builds on (its base commit)',
      'BUNDLE_UNUSABLE',
    )
  }
}

/** Brings a verified bundle's objects into `repo`; no ref is changed. */
export async function unbundleObjects(repo: string, file: string, options: GitEnvOptions): Promise<void> {
  await gitAt(repo, options).run(['bundle', 'unbundle', file])
}
