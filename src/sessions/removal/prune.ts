import { basename, join, relative } from 'node:path'
import { worktreeRoot } from '../../config.js'
import { listDir, pathExists, statPath } from '../../disk/door.js'
import { canonicalPath } from '../../git/common.js'
import type { GitEnvOptions } from '../../git/git.js'
import { branchCreatedAt } from '../../git/repo.js'
import { pruneWorktrees } from '../../git/worktree.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import type { SessionEnv } from '../ports.js'
import type { SessionRecord } from '../record/schema.js'
import { decideRemoval, type KeepReason } from './decision.js'
import type { RemovalResult } from './executor.js'
import { executeRemoval, type RemovalCandidate } from './executor.js'
import { type ProgressReporter, silentProgress } from './progress.js'
import { RepoCache, type RepoView } from './repo-view.js'
import type { PrunedItem, PrunedKind, PruneReport } from './report.js'
import { baseBranchOf, isEmptyDir } from './session-plan.js'

/** How recent an orphan may be and still be left alone by default: a run still setting up has no record yet. */
export const DEFAULT_PRUNE_OLDER_THAN = '1h'

export interface PruneOptions {
  olderThan?: { text: string; ms: number }
  force: boolean
  dryRun: boolean
  now?: Date
  /** Told which worktree is being handled, for a progress line. */
  progress?: ProgressReporter
}

/** One orphan: what it is (for the report) and what removing it means (for the executor). */
export interface Orphan {
  item: Omit<PrunedItem, 'forced'>
  candidate: RemovalCandidate
  /** worktree: its registration (a branch checked out there is free once it goes). */
  entry?: WorktreeInfo
}

/** What a record owns: never an orphan. */
export interface Owned {
  branches: Set<string>
  paths: Set<string>
}

interface PruneScope {
  repo: RepoView
  owned: Owned
  root: string
  options: PruneOptions
  /** Younger than --older-than: left alone. */
  young: (time: number | null) => boolean
  olderThan: string
}

/**
 * `harness session prune`: `harness/*` branches, worktrees on them or under the worktree root, and folders
 * under the worktree root that no record owns. A record's id (even of a corrupt record) owns `harness/<id>`
 * and `<root>/<id>`; a valid record also owns its git_branch and worktree_dir. Same rules and executor as
 * cleanup (see docs/development/design.md, "Removal").
 */
export async function pruneOrphans(ctx: SessionEnv, options: PruneOptions): Promise<PruneReport> {
  const paths = await ctx.project()
  const olderThan = options.olderThan ?? { text: DEFAULT_PRUNE_OLDER_THAN, ms: 3_600_000 }
  const root = worktreeRoot(await ctx.config(), paths.root)
  const report = emptyPruneReport(options.dryRun, olderThan, root)
  const repo = await new RepoCache(ctx.cwd, ctx.env).get(paths.root)
  if (!repo) return report
  const now = options.now?.getTime() ?? ctx.clock.now()
  const store = await ctx.store()
  const scope: PruneScope = {
    repo,
    owned: ownedBy(store.ids(), paths.exists ? store.list() : [], root),
    root,
    options,
    young: (time) => time !== null && now - time < olderThan.ms,
    olderThan: olderThan.text,
  }

  // Worktrees first: a branch can only go once no worktree has it checked out.
  const { orphans, keepRegistrations } = await orphanWorktrees(scope, report)
  const goingWorktrees = new Set<WorktreeInfo>()
  const progress = options.progress ?? silentProgress
  for (const [index, orphan] of orphans.entries()) {
    progress.step(index, orphans.length, orphan.item.path ?? '')
    if ((await prune(orphan, report, options, repo.git)) && orphan.entry) goingWorktrees.add(orphan.entry)
  }
  progress.end()
  for (const orphan of await orphanBranches(scope, goingWorktrees))
    await prune(orphan, report, options, repo.git)
  for (const orphan of orphanFolders(scope)) await prune(orphan, report, options, repo.git)

  if (!keepRegistrations) {
    report.registrations = await pruneWorktrees(repo.dir, { ...repo.git, dryRun: options.dryRun })
  }
  return report
}

/** The report before anything is looked at. */
export function emptyPruneReport(
  dryRun: boolean,
  olderThan: { text: string; ms: number },
  root: string,
): PruneReport {
  return {
    dry_run: dryRun,
    older_than: olderThan.text,
    older_than_ms: olderThan.ms,
    worktree_root: root,
    removed: [],
    kept: [],
    snapshots: [],
    registrations: [],
  }
}

/** Why something younger than --older-than stays: a harness run still setting up has no record yet. */
export function tooRecent(what: string, olderThan: string): KeepReason {
  return {
    code: 'TOO_RECENT',
    kind: 'blocked',
    message: `${what} is younger than ${olderThan} (a harness run that is still setting up has no record yet)`,
  }
}

/**
 * A record's id (even of a corrupt record) owns `harness/<id>` and `<root>/<id>`; a valid record its branch,
 * its base (a base is never deleted: docs/security.md, "Adopt") and its worktree.
 */
export function ownedBy(
  ids: string[],
  records: Pick<SessionRecord, 'git_branch' | 'worktree_dir' | 'base_ref'>[],
  root: string,
): Owned {
  const branches = new Set<string>(ids.map((id) => `harness/${id}`))
  const paths = new Set<string>(ids.map((id) => canonicalPath(join(root, id))))
  for (const record of records) {
    if (record.git_branch) branches.add(record.git_branch)
    const base = baseBranchOf(record)
    if (base) branches.add(base)
    paths.add(canonicalPath(record.worktree_dir))
  }
  return { branches, paths }
}

/**
 * Worktrees no record owns, on a harness/* branch or under the worktree root. `keepRegistrations`: a
 * registration whose folder is gone is all that keeps a detached HEAD's commits reachable, and it stays, so
 * `git worktree prune` (which drops every such registration) must not run.
 */
async function orphanWorktrees(
  scope: PruneScope,
  report: PruneReport,
): Promise<{ orphans: Orphan[]; keepRegistrations: boolean }> {
  const { repo, owned, options } = scope
  const orphans: Orphan[] = []
  let keepRegistrations = false
  for (const entry of repo.state.worktrees) {
    if (entry.isMain) continue
    const gone = !entry.locked && !pathExists(entry.path)
    const inScope = isPrunable(entry, owned, scope.root)
    let reasons: KeepReason[]
    if (gone) {
      reasons = await repo.worktreeReasons(entry, undefined)
      if (reasons.length === 0) continue
      if (!inScope || !options.force) keepRegistrations = true
      if (!inScope) {
        report.kept.push({ kind: 'worktree', path: entry.path, branch: entry.branch, reasons })
        continue
      }
    } else {
      if (!inScope) continue
      const created = mtimeOf(join(entry.path, '.git')) ?? mtimeOf(entry.path)
      reasons = scope.young(created)
        ? [tooRecent(`worktree ${entry.path}`, scope.olderThan)]
        : await repo.worktreeReasons(entry, undefined)
    }
    orphans.push(worktreeOrphan(repo.dir, entry, reasons, pathExists(entry.path)))
  }
  return { orphans, keepRegistrations }
}

/**
 * Whether a registered worktree is prune's to consider: no record owns its folder or its branch, and it is on
 * a harness/* branch or under the worktree root.
 */
export function isPrunable(
  entry: Pick<WorktreeInfo, 'path' | 'branch'>,
  owned: Owned,
  root: string,
): boolean {
  if (owned.paths.has(canonicalPath(entry.path))) return false
  if (entry.branch && owned.branches.has(entry.branch)) return false
  const rel = relative(canonicalPath(root), canonicalPath(entry.path))
  const underRoot = rel !== '' && !rel.startsWith('..') && !rel.startsWith('/')
  return underRoot || Boolean(entry.branch?.startsWith('harness/'))
}

/** An orphan worktree as a candidate: its snapshot is of its files, or of its HEAD when its folder is gone. */
export function worktreeOrphan(
  repo: string,
  entry: WorktreeInfo,
  reasons: KeepReason[],
  exists: boolean,
): Orphan {
  const refs = exists ? { worktreeDir: entry.path } : { worktreeHead: entry.head ?? undefined }
  return {
    item: { kind: 'worktree', path: entry.path, branch: entry.branch },
    candidate: {
      reasons,
      snapshot: orphanSnapshot(repo, refName(basename(entry.path)), 'worktree', entry.path, refs),
      steps: [{ kind: 'worktree', repo, entry }],
      describe: entry.path,
    },
    entry,
  }
}

/** harness/* branches no record owns and no remaining worktree has checked out. */
async function orphanBranches(scope: PruneScope, goingWorktrees: Set<WorktreeInfo>): Promise<Orphan[]> {
  const { repo, owned } = scope
  const orphans: Orphan[] = []
  for (const [name, tip] of repo.state.branches) {
    if (!name.startsWith('harness/') || owned.branches.has(name)) continue
    const reasons: KeepReason[] = []
    // A registration whose folder is gone (and not locked) is dropped by `git worktree prune` afterwards.
    const holder = branchHolder(name, repo.state.worktrees, goingWorktrees, pathExists)
    const created = (await branchCreatedAt(repo.dir, name, repo.git))?.getTime() ?? null
    let mergedInto: string | null = null
    if (holder) {
      reasons.push({
        code: 'BRANCH_CHECKED_OUT',
        kind: 'blocked',
        message: `branch ${name} is checked out in ${holder.path}`,
      })
    } else if (scope.young(created)) {
      reasons.push(tooRecent(`branch ${name}`, scope.olderThan))
    } else {
      mergedInto = await repo.mergedTarget(name, repo.state.mainTargets)
      if (!mergedInto) reasons.push(await repo.unmergedReason(name, tip, repo.state.mainTargets))
    }
    orphans.push({
      item: { kind: 'branch', path: null, branch: name, commit: tip, merged_into: mergedInto },
      candidate: {
        reasons,
        snapshot: orphanSnapshot(repo.dir, name.slice('harness/'.length), 'branch', name, { branchTip: tip }),
        steps: [{ kind: 'branch', repo: repo.dir, name, tip, dropConfig: repo.state.configured.has(name) }],
        describe: `branch ${name}`,
      },
    })
  }
  return orphans
}

/**
 * The worktree that keeps branch `name` checked out once the orphan worktrees in `going` are removed. A
 * registration whose folder is gone (and not locked) does not count: `git worktree prune` drops it afterwards.
 */
export function branchHolder(
  name: string,
  worktrees: WorktreeInfo[],
  going: Set<WorktreeInfo>,
  exists: (path: string) => boolean,
): WorktreeInfo | undefined {
  return worktrees.find((w) => w.branch === name && !going.has(w) && (w.locked || exists(w.path)))
}

/** Folders under the worktree root that are neither owned nor registered: an empty one goes. */
function orphanFolders(scope: PruneScope): Orphan[] {
  const { repo, owned, root } = scope
  if (!pathExists(root)) return []
  const registered = new Set(repo.state.worktrees.map((w) => canonicalPath(w.path)))
  const orphans: Orphan[] = []
  for (const child of listDir(root).sort()) {
    const path = join(root, child)
    const key = canonicalPath(path)
    if (owned.paths.has(key) || registered.has(key)) continue
    const empty = isEmptyDir(path)
    const reasons = folderReasons(path, empty, empty && scope.young(mtimeOf(path)), scope.olderThan)
    orphans.push({
      item: { kind: 'folder', path, branch: null },
      candidate: { reasons, snapshot: null, steps: [{ kind: 'empty-folder', path }], describe: path },
    })
  }
  return orphans
}

/** An unregistered folder under the worktree root goes only when it is empty and old enough. */
export function folderReasons(path: string, empty: boolean, young: boolean, olderThan: string): KeepReason[] {
  if (!empty) {
    return [{ code: 'NOT_A_WORKTREE', kind: 'blocked', message: `${path} is not a git worktree: left alone` }]
  }
  return young ? [tooRecent(`folder ${path}`, olderThan)] : []
}

function orphanSnapshot(
  repo: string,
  name: string,
  kind: PrunedKind,
  what: string,
  refs: { worktreeDir?: string; worktreeHead?: string; branchTip?: string },
) {
  return { repo, name, ...refs, label: `orphan ${kind} ${what} before prune` }
}

/** The one rule and the one executor, for an orphan; true when it was (or would be) removed. */
async function prune(
  orphan: Orphan,
  report: PruneReport,
  options: PruneOptions,
  git: GitEnvOptions,
): Promise<boolean> {
  const { candidate } = orphan
  const result = await executeRemoval(candidate, decideRemoval(candidate.reasons, options.force), {
    dryRun: options.dryRun,
    env: git.env,
  })
  return recordOutcome(report, orphan, result)
}

/** Adds what happened to one orphan to the report; true when it was (or would be) removed. */
export function recordOutcome(report: PruneReport, orphan: Orphan, result: RemovalResult): boolean {
  const { item, candidate } = orphan
  if (result.status === 'gone') return false
  if (result.snapshot) report.snapshots.push({ name: candidate.snapshot?.name ?? '', ...result.snapshot })
  if (result.status === 'kept') {
    report.kept.push({ kind: item.kind, path: item.path, branch: item.branch, reasons: result.reasons })
    return false
  }
  report.removed.push({ ...item, forced: result.forced })
  return true
}

/** A folder name as one ref name component. */
export function refName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'worktree'
}

function mtimeOf(path: string): number | null {
  try {
    return statPath(path).mtimeMs
  } catch {
    return null
  }
}
