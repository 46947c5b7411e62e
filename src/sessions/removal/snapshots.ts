import { shellWord } from '../../errors.js'
import type { GitEnvOptions } from '../../git/git.js'
import { listRefs } from '../../git/refs.js'
import { snapshotRef, snapshotWorktree } from '../../git/snapshot.js'

export interface SnapshotRefs {
  /** The refs stored (under --dry-run: that would be stored). */
  refs: { worktree?: string; branch?: string }
  /** What they point at; the worktree snapshot's commit is null under --dry-run (not made yet). */
  commits: { worktree?: string | null; branch?: string | null }
  /** Shell commands that bring the work back. */
  restore: string[]
}

/** What --force keeps under refs/harness/<name>/ before it removes unsafe work. */
export interface SnapshotPlan {
  repo: string
  name: string
  worktreeDir?: string
  /** The HEAD of a worktree whose folder is gone: kept as the `worktree` snapshot, when there is no folder. */
  worktreeHead?: string
  branchTip?: string
  label: string
}

/**
 * Stores what --force is about to remove under refs/harness/<name>/: `worktree` (a commit of every file,
 * untracked ones included, on top of the worktree's HEAD) and `branch` (the tip). Existing refs are never
 * overwritten: a taken name gets a suffix (`worktree-2`). Under dryRun only the names are worked out.
 */
export async function storeSnapshots(
  plan: SnapshotPlan,
  dryRun: boolean,
  options: GitEnvOptions,
): Promise<SnapshotRefs> {
  const git = { env: options.env }
  const { repo, name } = plan
  const prefix = `refs/harness/${name}`
  const taken = [...(await listRefs(repo, `${prefix}/`, git)).keys()]
  const free = (base: string) => {
    const used = (ref: string) => taken.some((t) => t === ref || t.startsWith(`${ref}/`))
    let ref = `${prefix}/${base}`
    for (let n = 2; used(ref); n++) ref = `${prefix}/${base}-${n}`
    return ref
  }
  const result: SnapshotRefs = { refs: {}, commits: {}, restore: [] }
  const gitC = `git -C ${shellWord(repo)}`
  if (plan.branchTip) {
    const ref = free('branch')
    result.refs.branch = ref
    result.commits.branch = plan.branchTip
    if (!dryRun) {
      await snapshotRef(repo, ref, plan.branchTip, { message: `harness: ${plan.label}: branch tip`, ...git })
    }
    result.restore.push(`${gitC} branch ${shellWord(`restore-${name}`)} ${ref}`)
  }
  if (plan.worktreeDir) {
    const ref = free('worktree')
    result.refs.worktree = ref
    result.commits.worktree = null
    if (!dryRun) {
      const snapshot = await snapshotWorktree({
        worktreeDir: plan.worktreeDir,
        ref,
        message: `harness: ${plan.label}: every file of ${plan.worktreeDir}`,
        ...git,
      })
      result.commits.worktree = snapshot.commit
    }
    result.restore.push(`${gitC} worktree add ${shellWord(plan.worktreeDir)} ${ref}`)
  } else if (plan.worktreeHead) {
    const ref = free('worktree')
    result.refs.worktree = ref
    result.commits.worktree = plan.worktreeHead
    if (!dryRun) {
      await snapshotRef(repo, ref, plan.worktreeHead, {
        message: `harness: ${plan.label}: worktree HEAD`,
        ...git,
      })
    }
    result.restore.push(`${gitC} branch ${shellWord(`restore-${name}-head`)} ${ref}`)
  }
  return result
}
