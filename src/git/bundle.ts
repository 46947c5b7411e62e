import { IllegalStateError } from '../errors.js'
import { assertRefArg, revParseOrNull } from './common.js'
import { type GitEnvOptions, gitAt, gitDetail, gitFailed } from './git.js'
import { deleteRefs, storeRef } from './refs.js'
import { commitTree, writeWorktreeTree } from './snapshot.js'

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

/** What a remote job starts from (`bundleForJob`): the branch tip and the worktree's whole tree. */
export interface JobInput {
  startTip: string
  /** The worktree's files as a tree (tracked and untracked, ignored ones excluded). */
  startTree: string
  /** The bundle also holds `worktreeRef`: the worktree had uncommitted files. */
  worktreeState: boolean
  worktreeRef: string
}

/**
 * The input of a remote job (SPEC §14 `slurm`, docs/backends.md "The spool"): a bundle of the session's branch
 * with its history, and, when the worktree holds uncommitted files, a commit of its whole tree on the branch tip
 * under `refs/harness/<id>/worktree`, made through a temporary index (the worktree, its index and branch are not
 * touched) and removed once bundled. The job restores those files as uncommitted.
 */
export async function bundleForJob(
  options: GitEnvOptions & { repoDir: string; worktreeDir: string; branch: string; id: string; file: string },
): Promise<JobInput> {
  const { repoDir, branch, id } = options
  const branchRef = `refs/heads/${branch}`
  const startTip = await revParseOrNull(repoDir, `${branchRef}^{commit}`, options)
  if (!startTip) throw new IllegalStateError(`the branch ${branch} of session "${id}" is gone`)
  const [{ tree }, tipTree] = await Promise.all([
    writeWorktreeTree(options.worktreeDir, options),
    gitAt(repoDir, options).text(['rev-parse', '--verify', '--end-of-options', `${startTip}^{tree}`]),
  ])
  const worktreeRef = `refs/harness/${id}/worktree`
  const worktreeState = tree !== tipTree
  if (worktreeState) {
    const message = `harness: the uncommitted files of session ${id}, sent to its job`
    const commit = await commitTree(repoDir, tree, [startTip], message, options)
    await storeRef(repoDir, worktreeRef, commit, message, { ...options, overwrite: true })
  }
  try {
    await createBundle(
      repoDir,
      options.file,
      worktreeState ? [branchRef, worktreeRef] : [branchRef],
      null,
      options,
    )
  } finally {
    if (worktreeState)
      await deleteRefs(repoDir, `refs/harness/${id}/`, [worktreeRef], options).catch(() => {})
  }
  return { startTip, startTree: tree, worktreeState, worktreeRef }
}
