import { dirname, join } from 'node:path'
import { entryExists, isEmptyFolder, pathExists } from '../../disk/door.js'
import { isAncestor } from '../../git/repo.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import { logPathFor } from '../../project.js'
import { backendOf } from '../backends/index.js'
import { agentDirFor } from '../record/agent-files.js'
import { lastRun } from '../record/liveness.js'
import type { SessionRecord } from '../record/schema.js'
import type { KeepReason } from './decision.js'
import type { RemovalCandidate, RemovalStep } from './executor.js'
import type { RepoCache, RepoView } from './repo-view.js'
import { shortRef } from './repo-view.js'
import type { SnapshotPlan } from './snapshots.js'

/** What removing one session means, found out before anything is touched. */
export interface SessionPlan {
  record: SessionRecord
  repo: RepoView | null
  /** A registered worktree to remove, or (entry null) an empty folder left where the worktree was. */
  worktree: { path: string; entry: WorktreeInfo | null } | null
  branch: { name: string; tip: string; mergedInto: string | null; configured: boolean } | null
  log: string
  reasons: KeepReason[]
  /**
   * Set when the worktree's files were not looked at (`deferContent`): their reasons (DIRTY, NESTED_REPO)
   * belong at `reasons[at]`. Cleanup looks at them under the session's lock instead
   * (docs/development/design.md, "Removal"), or at planning's end when the session is kept anyway, so that
   * its report is whole.
   */
  contentCheck: { at: number } | null
}

/** The last sign of activity: the latest of completed_at, the last run's ended_at and created_at. */
export function lastActiveAt(record: SessionRecord): string {
  const times = [record.completed_at, lastRun(record)?.ended_at, record.created_at]
  let best = record.created_at
  let bestMs = Date.parse(best)
  for (const time of times) {
    const ms = time ? Date.parse(time) : Number.NaN
    if (time && ms > bestMs) {
      best = time
      bestMs = ms
    }
  }
  return best
}

/** Looks at one session's worktree and branch: what would go, and what would make it stay. */
export async function planSession(
  record: SessionRecord,
  where: {
    repos: RepoCache
    projectRoot: string
    logsDir: string
    /** Whether a path lies where worktrees may be removed from (docs/security.md; `isInsideRoots`). */
    isInsideRoots: (path: string) => boolean
    force: boolean
    /** Leave the look at the worktree's files to later (`SessionPlan.contentCheck`). */
    deferContent?: boolean
    /** The ids of the sessions whose recorded base (`base_ref`) is this branch (short name). */
    basedOn?: (branch: string) => Promise<string[]>
  },
): Promise<SessionPlan> {
  const plan: SessionPlan = {
    record,
    repo: null,
    worktree: null,
    branch: null,
    log: logPathFor(where.logsDir, record.id),
    reasons: [],
    contentCheck: null,
  }
  if (record.sealed === false) {
    // Shown, never acted on: what a record harness did not seal names may be anyone's (docs/security.md).
    plan.reasons.push({
      code: 'FOREIGN',
      kind: 'blocked',
      message: `the record was not sealed by harness for this user: its worktree, branch and log are left alone (check it, then "harness session adopt ${record.id}")`,
    })
    return plan
  }
  const uncollected = (await backendOf(record)).uncollected(record)
  if (uncollected) {
    // The agent's work is still only where its backend left it (docs/backends.md): kept until it is back.
    plan.reasons.push({
      code: 'UNCOLLECTED',
      kind: 'blocked',
      message: `${uncollected}: kept; "harness session collect ${record.id}" (or resume) brings it back first`,
    })
    return plan
  }
  const hasWorktree = record.is_worktree ?? Boolean(record.git_branch)
  if (!hasWorktree) return plan // ran in a plain folder: only the record and the log are its own
  const repoDir = record.base_dir ?? where.projectRoot
  const repo = await where.repos.get(repoDir)
  if (!repo) {
    const present = entryExists(record.worktree_dir)
    plan.reasons.push({
      code: 'REPO_MISSING',
      kind: present ? 'blocked' : 'unsafe',
      message: present
        ? `the repository ${repoDir} cannot be read: its worktree ${record.worktree_dir} is left alone`
        : `the repository ${repoDir} cannot be read: the session's branch could not be checked`,
    })
    return plan
  }
  plan.repo = repo
  const name = record.git_branch ?? undefined
  const tip = name ? repo.state.branches.get(name) : undefined
  const entry = await planWorktree(plan, repo, tip, where)
  // A branch is deleted only if this session made it (docs/security.md); one it did not make is not its loss.
  if (name && tip && record.branch_created === true) {
    await planBranch(plan, repo, { name, tip, entry, basedOn: (await where.basedOn?.(name)) ?? [] })
  }
  return plan
}

/** A recorded base as a branch's short name (`refs/heads/main` and `main` alike), or null. */
export function baseBranchOf(record: Pick<SessionRecord, 'base_ref'>): string | null {
  return typeof record.base_ref === 'string' ? record.base_ref.replace(/^refs\/heads\//, '') : null
}

/** The session's worktree: what would go, and what would make it stay; returns its registration if it is ours. */
async function planWorktree(
  plan: SessionPlan,
  repo: RepoView,
  tip: string | undefined,
  where: Parameters<typeof planSession>[1],
): Promise<WorktreeInfo | undefined> {
  const { record } = plan
  const found = repo.worktreeAt(record.worktree_dir)
  const contained = where.isInsideRoots(record.worktree_dir)
  if ((found && (found.isMain || !contained)) || (!found && !contained && entryExists(record.worktree_dir))) {
    plan.reasons.push({
      code: 'OUTSIDE_WORKTREE_ROOT',
      kind: 'blocked',
      message: `${record.worktree_dir} is not a worktree under harness's worktree root: left alone`,
    })
  }
  const entry = found && !found.isMain && contained ? found : undefined
  if (entry) {
    plan.worktree = { path: entry.path, entry }
    const found = await repo.reasonsBeforeContent(entry, tip)
    if (found) plan.reasons.push(...found)
    else {
      if (where.deferContent) plan.contentCheck = { at: plan.reasons.length }
      else plan.reasons.push(...(await repo.contentReasons(entry.path)))
      plan.reasons.push(...(await repo.detachedReasons(entry, tip)))
    }
  } else if (contained && entryExists(record.worktree_dir)) {
    // A link at the record's path is not followed: it is not an empty folder, so it is left alone.
    if (isEmptyDir(record.worktree_dir)) plan.worktree = { path: record.worktree_dir, entry: null }
    else {
      plan.reasons.push({
        code: 'NOT_A_WORKTREE',
        kind: 'blocked',
        message: `${record.worktree_dir} is not a worktree of ${repo.dir}: left alone`,
      })
    }
  }
  return entry
}

/** The branch the session made: where it is checked out, and whether its work is merged somewhere. */
async function planBranch(
  plan: SessionPlan,
  repo: RepoView,
  branch: { name: string; tip: string; entry: WorktreeInfo | undefined; basedOn: string[] },
): Promise<void> {
  const { record } = plan
  const { name, tip } = branch
  // A base is never deleted (docs/security.md, "Adopt"): not the session's own (a record claiming its branch
  // is its base would count it merged into itself), not another session's.
  const others = branch.basedOn.filter((id) => id !== record.id)
  if (baseBranchOf(record) === name || others.length > 0) {
    plan.reasons.push({
      code: 'BRANCH_IS_BASE',
      kind: 'blocked',
      message:
        others.length > 0
          ? `branch ${name} is the base of session ${others.map((id) => `"${id}"`).join(', ')}: harness never deletes a base`
          : `branch ${name} is this session's own base: harness never deletes a base`,
    })
  }
  const holder = repo.holderOf(name, branch.entry)
  if (holder) {
    plan.reasons.push({
      code: 'BRANCH_CHECKED_OUT',
      kind: 'blocked',
      message: `branch ${name} is checked out in ${holder.path}`,
    })
  }
  const targets = mergeTargets(record, repo).filter((target) => target !== `refs/heads/${name}`)
  let mergedInto = await repo.mergedTarget(name, targets)
  const base = record.base_commit ?? undefined
  if (!mergedInto && base && (tip === base || (await isAncestor(repo.dir, tip, base, repo.git)))) {
    mergedInto = 'base_commit'
  }
  if (!mergedInto) mergedInto = await recordedMerge(record, tip, targets, repo)
  if (!mergedInto) plan.reasons.push(await repo.unmergedReason(name, tip, targets, base))
  plan.branch = { name, tip, mergedInto, configured: repo.state.configured.has(name) }
}

/**
 * A squash merge holds none of the branch's commits: `session merge` records the tip it landed and the commit
 * it made, and the branch counts as merged while it still points there and that commit is in a target.
 */
async function recordedMerge(
  record: SessionRecord,
  tip: string,
  targets: string[],
  repo: RepoView,
): Promise<string | null> {
  const landed = record.merge_commit
  if (!landed || record.merged_head !== tip) return null
  for (const target of targets)
    if (await isAncestor(repo.dir, landed, target, repo.git)) return shortRef(target)
  return null
}

/**
 * "Merged into its base" means reachable from: the recorded base_ref when it is a local or remote-tracking
 * branch that still exists, the branch checked out in the main worktree, or that branch's upstream.
 */
function mergeTargets(record: SessionRecord, repo: RepoView): string[] {
  const targets: string[] = []
  const baseRef = baseBranchOf(record)
  if (baseRef && repo.state.branches.has(baseRef)) targets.push(`refs/heads/${baseRef}`)
  else if (baseRef && repo.state.remotes.has(shortRef(baseRef)))
    targets.push(`refs/remotes/${shortRef(baseRef)}`)
  for (const target of repo.state.mainTargets) if (!targets.includes(target)) targets.push(target)
  return targets
}

/**
 * Everything a session owns, in removal order: worktree, branch, log; the executor deletes the record last.
 * A new per-session artefact (checkpoint refs, the agent's own folder) is added here, in the order that keeps
 * an interrupted removal recoverable.
 */
function sessionArtefacts(plan: SessionPlan): RemovalStep[] {
  const steps: RemovalStep[] = []
  const repo = plan.repo
  if (plan.worktree && repo) {
    const { entry, path } = plan.worktree
    steps.push(entry ? { kind: 'worktree', repo: repo.dir, entry } : { kind: 'empty-folder', path })
  }
  if (plan.branch && repo) {
    const { name, tip, configured } = plan.branch
    steps.push({ kind: 'branch', repo: repo.dir, name, tip, dropConfig: configured })
  }
  steps.push({ kind: 'file', path: plan.log })
  // The disk-space reserve a SIGKILLed supervisor leaves beside the log (docs/security.md) goes too.
  steps.push({ kind: 'file', path: join(dirname(plan.log), `${plan.record.id}.reserve`) })
  // The agent's own files (pi's session file, aider's history) go with the session (docs/providers.md).
  steps.push({ kind: 'folder', path: agentDirFor(dirname(dirname(plan.log)), plan.record.id) })
  // And whatever its backend still holds (a Slurm session's spool folder, a container left behind).
  steps.push({ kind: 'backend', record: plan.record })
  // So do its checkpoints (docs/continuity.md); the --force snapshots stay.
  const checkpoints = plan.record.checkpoints ?? []
  if (repo && checkpoints.length) {
    const prefix = `refs/harness/${plan.record.id}/checkpoints/`
    steps.push({ kind: 'refs', repo: repo.dir, prefix, refs: checkpoints.map((c) => c.ref) })
  }
  return steps
}

/** The snapshot --force takes of a session: every file of its worktree (or its HEAD) and its branch tip. */
function sessionSnapshot(plan: SessionPlan): SnapshotPlan | null {
  const repo = plan.repo
  if (!repo) return null
  const entry = plan.worktree?.entry
  const worktreeDir = entry && !entry.isMain && pathExists(entry.path) ? entry.path : undefined
  const worktreeHead = entry && !worktreeDir && entry.detached ? (entry.head ?? undefined) : undefined
  const branchTip = plan.branch?.tip
  if (!worktreeDir && !worktreeHead && !branchTip) return null
  const id = plan.record.id
  return {
    repo: repo.dir,
    name: id,
    worktreeDir,
    worktreeHead,
    branchTip,
    label: `session ${id} before removal`,
  }
}

export function sessionCandidate(plan: SessionPlan): RemovalCandidate {
  return {
    reasons: plan.reasons,
    contentUnchecked: plan.contentCheck !== null,
    snapshot: sessionSnapshot(plan),
    steps: sessionArtefacts(plan),
    record: plan.record,
    describe: `worktree ${plan.worktree?.path}`,
  }
}

export function isEmptyDir(path: string): boolean {
  return isEmptyFolder(path)
}
