import { ExternalToolError, IllegalStateError } from '../errors.js'
import { assertRefArg, type GitEnvOptions, gitDetail, run } from './common.js'

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
  const result = await run(args, repo, { ...options, allowFailure: true })
  if (result.exitCode === 0) return true
  if (/empty bundle/i.test(result.stderr)) return false
  throw new ExternalToolError(`git bundle create failed: ${gitDetail(result)}`, undefined, 'GIT_FAILED')
}

/** Refuses a bundle that is damaged or whose prerequisites (the base commit it builds on) `repo` lacks. */
export async function verifyBundle(repo: string, file: string, options: GitEnvOptions): Promise<void> {
  const verify = await run(['bundle', 'verify', '-q', file], repo, { ...options, allowFailure: true })
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
  await run(['bundle', 'unbundle', file], repo, options)
}

/** Whether `commit` names a commit present in `repo`. */
export async function hasCommit(repo: string, commit: string, options: GitEnvOptions): Promise<boolean> {
  assertRefArg(commit, 'commit')
  const result = await run(['cat-file', '-e', `${commit}^{commit}`], repo, { ...options, allowFailure: true })
  return result.exitCode === 0
}

/** Creates refs in one transaction; each must not exist yet (git refuses the whole transaction otherwise). */
export async function createRefs(
  repo: string,
  refs: { ref: string; commit: string }[],
  options: GitEnvOptions,
): Promise<void> {
  if (refs.length === 0) return
  for (const { ref, commit } of refs) {
    assertRefArg(ref)
    assertRefArg(commit, 'commit')
  }
  await run(['update-ref', '--stdin'], repo, {
    ...options,
    input: refs.map(({ ref, commit }) => `create ${ref} ${commit}\n`).join(''),
  })
}
