import type { SessionStatus } from '../record/schema.js'
import type { KeepReason } from './decision.js'
import type { SnapshotRefs } from './snapshots.js'

export type { KeepReason, ReasonKind } from './decision.js'
export type { SnapshotRefs } from './snapshots.js'

/** The result types of cleanup, delete and prune, as printed under --json (see docs/commands.md, "Safety rules"). */

export interface SessionSnapshot extends SnapshotRefs {
  id: string
}

export interface DeletedBranch {
  name: string
  commit: string
  /**
   * What contains the branch's commits: a branch name (`main`, `origin/main`), `base_commit` when the branch
   * has no commits of its own, or null when --force deleted unmerged commits (see `snapshots`).
   */
  merged_into: string | null
}

export interface RemovedSession {
  id: string
  status: SessionStatus
  last_active_at: string
  /** The worktree folder removed, or null when there was none. */
  worktree: string | null
  /** The branch deleted, or null when there was none. */
  branch: DeletedBranch | null
  /** The log removed, or null when there was none. */
  log: string | null
  /** --force removed work that the safety rules would have kept; its snapshot is in `snapshots`. */
  forced: boolean
  /**
   * `delete` of a foreign record (not sealed by harness for this user): its file alone was removed, nothing it
   * names (docs/security.md).
   */
  record_only?: true
}

export interface KeptSession {
  id: string
  status: SessionStatus
  last_active_at: string
  worktree: string | null
  branch: string | null
  reasons: KeepReason[]
}

/** The result of `session cleanup` and `session delete` (under --dry-run: the plan). */
export interface RemovalReport {
  dry_run: boolean
  /** cleanup only: the age threshold, as given and in milliseconds. */
  older_than?: string
  older_than_ms?: number
  removed: RemovedSession[]
  kept: KeptSession[]
  snapshots: SessionSnapshot[]
  /** cleanup only: sessions not considered. */
  skipped?: { running: number; younger: number; filtered: number }
}

export type PrunedKind = 'worktree' | 'branch' | 'folder'

export interface PrunedItem {
  kind: PrunedKind
  /** worktree, folder: its path. */
  path: string | null
  /** worktree: the branch checked out there (not deleted by that); branch: the branch deleted. */
  branch: string | null
  /** branch: the commit it pointed at. */
  commit?: string
  /** branch: what contains its commits (`main`, `origin/main`), or null when --force deleted unmerged ones. */
  merged_into?: string | null
  /** --force removed work the safety rules would have kept; its snapshot is in `snapshots`. */
  forced: boolean
}

export interface PruneKept {
  kind: PrunedKind
  path: string | null
  branch: string | null
  reasons: KeepReason[]
}

export interface PruneSnapshot extends SnapshotRefs {
  /** The `<name>` of refs/harness/<name>/: the branch without `harness/`, or the worktree's folder name. */
  name: string
}

export interface PruneReport {
  dry_run: boolean
  older_than: string
  older_than_ms: number
  worktree_root: string
  removed: PrunedItem[]
  kept: PruneKept[]
  snapshots: PruneSnapshot[]
  /** `git worktree prune`: registrations whose folder is gone (under --dry-run: that would be dropped). */
  registrations: string[]
}
