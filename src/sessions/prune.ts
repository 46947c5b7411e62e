import { existsSync, readdirSync, rmdirSync, statSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import type { Context } from '../cli/context.js'
import { loadConfig, worktreeRoot } from '../config.js'
import { HarnessError } from '../errors.js'
import { canonicalPath } from '../git/common.js'
import {
  branchCreatedAt,
  countCommitsNotIn,
  deleteBranchAt,
  prunableRegistrations,
  removeListedWorktree,
} from '../git/removal.js'
import { pruneWorktrees } from '../git/worktree.js'
import type { WorktreeInfo } from '../git/worktree-list.js'
import {
  type KeepReason,
  RepoCache,
  type RepoView,
  type SnapshotRefs,
  shortRef,
  storeSnapshots,
} from './cleanup.js'
import { type ProgressReporter, silentProgress } from './progress.js'

/** How recent an orphan may be and still be left alone by default: a run still setting up has no record yet. */
export const DEFAULT_PRUNE_OLDER_THAN = '1h'

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

export interface PruneOptions {
  olderThan?: { text: string; ms: number }
  force: boolean
  dryRun: boolean
  now?: Date
  /** Told which worktree is being handled, for a progress line. */
  progress?: ProgressReporter
}

interface WorktreeCandidate {
  entry: WorktreeInfo
  reasons: KeepReason[]
}

/**
 * `harness session prune`: `harness/*` branches, worktrees on them or under the worktree root, and folders
 * under the worktree root that no record owns. A record's id (even of a corrupt record) owns `harness/<id>`
 * and `<root>/<id>`; a valid record also owns its git_branch and worktree_dir. Same safety rules as cleanup.
 */
export async function pruneOrphans(ctx: Context, options: PruneOptions): Promise<PruneReport> {
  const paths = await ctx.project()
  const config = loadConfig({ projectConfigFile: paths.configFile, env: ctx.env })
  const olderThan = options.olderThan ?? { text: DEFAULT_PRUNE_OLDER_THAN, ms: 3_600_000 }
  const root = worktreeRoot(config, paths.root)
  const report: PruneReport = {
    dry_run: options.dryRun,
    older_than: olderThan.text,
    older_than_ms: olderThan.ms,
    worktree_root: root,
    removed: [],
    kept: [],
    snapshots: [],
    registrations: [],
  }
  const repo = await new RepoCache(ctx.cwd).get(paths.root)
  if (!repo) return report
  const now = (options.now ?? new Date()).getTime()
  const young = (time: number | null) => time !== null && now - time < olderThan.ms
  const tooRecent = (what: string): KeepReason => ({
    code: 'TOO_RECENT',
    kind: 'blocked',
    message: `${what} is younger than ${olderThan.text} (a harness run that is still setting up has no record yet)`,
  })

  const store = await ctx.store()
  const ids = store.ids()
  const records = paths.exists ? store.list() : []
  const ownedBranches = new Set<string>(ids.map((id) => `harness/${id}`))
  const ownedPaths = new Set<string>(ids.map((id) => canonicalPath(join(root, id))))
  for (const record of records) {
    if (record.git_branch) ownedBranches.add(record.git_branch)
    ownedPaths.add(canonicalPath(record.worktree_dir))
  }
  const canonicalRoot = canonicalPath(root)
  const underRoot = (path: string) => {
    const rel = relative(canonicalRoot, canonicalPath(path))
    return rel !== '' && !rel.startsWith('..') && !rel.startsWith('/')
  }

  // Worktrees first: a branch can only go once no worktree has it checked out.
  const worktrees: WorktreeCandidate[] = []
  // `git worktree prune` below drops every registration whose folder is gone (a locked one it keeps); one on a
  // detached HEAD that no branch contains is all that keeps those commits reachable: then it does not run.
  let keepRegistrations = false
  for (const entry of repo.state.worktrees) {
    if (entry.isMain) continue
    const gone = !entry.locked && !existsSync(entry.path)
    const inScope =
      !ownedPaths.has(canonicalPath(entry.path)) &&
      !(entry.branch && ownedBranches.has(entry.branch)) &&
      (underRoot(entry.path) || Boolean(entry.branch?.startsWith('harness/')))
    if (gone) {
      const reasons = await repo.worktreeReasons(entry, undefined)
      if (reasons.length === 0) continue
      if (!inScope || !options.force) keepRegistrations = true
      if (inScope) worktrees.push({ entry, reasons })
      else report.kept.push({ kind: 'worktree', path: entry.path, branch: entry.branch, reasons })
      continue
    }
    if (!inScope) continue
    const reasons: KeepReason[] = []
    const created = mtimeOf(join(entry.path, '.git')) ?? mtimeOf(entry.path)
    if (young(created)) reasons.push(tooRecent(`worktree ${entry.path}`))
    else reasons.push(...(await repo.worktreeReasons(entry, undefined, options.force)))
    worktrees.push({ entry, reasons })
  }
  const goingWorktrees = new Set<WorktreeInfo>()
  const progress = options.progress ?? silentProgress
  for (const [index, { entry, reasons }] of worktrees.entries()) {
    progress.step(index, worktrees.length, entry.path)
    const forced = await removeOrKeep(repo, report, options, reasons, {
      kind: 'worktree',
      path: entry.path,
      branch: entry.branch,
      snapshotName: refName(basename(entry.path)),
      snapshot: existsSync(entry.path)
        ? { worktreeDir: entry.path }
        : { worktreeHead: entry.head ?? undefined },
      remove: async () =>
        (await removeListedWorktree(repo.dir, entry, { force: reasons.length > 0 })) === 'removed',
    })
    if (forced !== null) goingWorktrees.add(entry)
  }

  progress.end()

  for (const [name, tip] of repo.state.branches) {
    if (!name.startsWith('harness/') || ownedBranches.has(name)) continue
    const reasons: KeepReason[] = []
    // A registration whose folder is gone (and not locked) is dropped by `git worktree prune` below.
    const holder = repo.state.worktrees.find(
      (w) => w.branch === name && !goingWorktrees.has(w) && (w.locked || existsSync(w.path)),
    )
    const created = (await branchCreatedAt(repo.dir, name))?.getTime() ?? null
    let mergedInto: string | null = null
    if (holder) {
      reasons.push({
        code: 'BRANCH_CHECKED_OUT',
        kind: 'blocked',
        message: `branch ${name} is checked out in ${holder.path}`,
      })
    } else if (young(created)) {
      reasons.push(tooRecent(`branch ${name}`))
    } else {
      mergedInto = await repo.mergedTarget(name, repo.state.mainTargets)
      if (!mergedInto) reasons.push(await unmerged(repo, name, tip))
    }
    await removeOrKeep(repo, report, options, reasons, {
      kind: 'branch',
      path: null,
      branch: name,
      commit: tip,
      mergedInto,
      snapshotName: name.slice('harness/'.length),
      snapshot: { branchTip: tip },
      remove: () =>
        deleteBranchAt(repo.dir, name, tip, { dropConfig: repo.state.configured.has(name) }).then(() => true),
    })
  }

  if (existsSync(root)) {
    const registered = new Set(repo.state.worktrees.map((w) => canonicalPath(w.path)))
    for (const child of readdirSync(root).sort()) {
      const path = join(root, child)
      const key = canonicalPath(path)
      if (ownedPaths.has(key) || registered.has(key)) continue
      const empty = isEmptyDir(path)
      const created = mtimeOf(path)
      const reasons: KeepReason[] = empty
        ? young(created)
          ? [tooRecent(`folder ${path}`)]
          : []
        : [{ code: 'NOT_A_WORKTREE', kind: 'blocked', message: `${path} is not a git worktree: left alone` }]
      await removeOrKeep(repo, report, options, reasons, {
        kind: 'folder',
        path,
        branch: null,
        snapshotName: '',
        remove: async () => {
          rmdirSync(path)
          return true
        },
      })
    }
  }

  if (!keepRegistrations) {
    report.registrations = options.dryRun
      ? await prunableRegistrations(repo.dir)
      : await pruneWorktrees(repo.dir)
  }
  return report
}

interface Candidate {
  kind: PrunedKind
  path: string | null
  branch: string | null
  commit?: string
  mergedInto?: string | null
  snapshotName: string
  snapshot?: { worktreeDir?: string; worktreeHead?: string; branchTip?: string }
  /** False when git found it changed meanwhile (kept). */
  remove: () => Promise<boolean>
}

/** Applies the safety rules to one orphan; returns whether it was (or would be) removed forcibly, null if kept. */
async function removeOrKeep(
  repo: RepoView,
  report: PruneReport,
  options: PruneOptions,
  reasons: KeepReason[],
  item: Candidate,
): Promise<boolean | null> {
  const keep = (why: KeepReason[]) => {
    report.kept.push({ kind: item.kind, path: item.path, branch: item.branch, reasons: why })
    return null
  }
  const unsafe = reasons.some((r) => r.kind === 'unsafe')
  if (reasons.some((r) => r.kind !== 'unsafe') || (unsafe && !options.force)) return keep(reasons)
  try {
    if (unsafe && item.snapshot) {
      const refs = await storeSnapshots(
        repo.dir,
        item.snapshotName,
        { ...item.snapshot, label: `orphan ${item.kind} ${item.path ?? item.branch} before prune` },
        options.dryRun,
      )
      report.snapshots.push({ name: item.snapshotName, ...refs })
    }
    if (!options.dryRun && !(await item.remove())) {
      return keep([
        {
          code: 'DIRTY',
          kind: 'unsafe',
          message: `${item.path} changed while it was being removed: it has uncommitted or untracked files`,
        },
      ])
    }
  } catch (error) {
    const code = error instanceof HarnessError ? error.code : 'UNEXPECTED'
    const kind = code === 'BRANCH_MOVED' || code === 'WORKTREE_LOCKED' ? 'blocked' : 'error'
    return keep([{ code, kind, message: error instanceof Error ? error.message : String(error) }])
  }
  const removed: PrunedItem = { kind: item.kind, path: item.path, branch: item.branch, forced: unsafe }
  if (item.kind === 'branch') {
    removed.commit = item.commit
    removed.merged_into = item.mergedInto ?? null
  }
  report.removed.push(removed)
  return unsafe
}

async function unmerged(repo: RepoView, name: string, tip: string): Promise<KeepReason> {
  const targets = repo.state.mainTargets
  const count = await countCommitsNotIn(repo.dir, tip, targets)
  return {
    code: 'UNMERGED',
    kind: 'unsafe',
    message: `branch ${name} has ${count} ${count === 1 ? 'commit' : 'commits'} not merged into ${targets.length ? targets.map(shortRef).join(' or ') : 'the main worktree’s branch (HEAD is detached)'}`,
  }
}

/** A folder name as one ref name component. */
function refName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'worktree'
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path).mtimeMs
  } catch {
    return null
  }
}

function isEmptyDir(path: string): boolean {
  try {
    return readdirSync(path).length === 0
  } catch {
    return false
  }
}
