import { existsSync, readdirSync, statSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { worktreeRoot } from '../../config.js'
import { canonicalPath } from '../../git/common.js'
import type { GitEnvOptions } from '../../git/git.js'
import { branchCreatedAt } from '../../git/repo.js'
import { pruneWorktrees } from '../../git/worktree.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import type { SessionEnv } from '../ports.js'
import { type ProgressReporter, silentProgress } from '../progress.js'
import type { SessionRecord } from '../schema.js'
import { decideRemoval, type KeepReason } from './decision.js'
import { executeRemoval, type RemovalCandidate } from './executor.js'
import { RepoCache, type RepoView } from './repo-view.js'
import type { PrunedItem, PrunedKind, PruneReport } from './report.js'
import { isEmptyDir } from './session-plan.js'

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
interface Orphan {
  item: Omit<PrunedItem, 'forced'>
  candidate: RemovalCandidate
  /** worktree: its registration (a branch checked out there is free once it goes). */
  entry?: WorktreeInfo
}

/** What a record owns: never an orphan. */
interface Owned {
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
  tooRecent: (what: string) => KeepReason
}

/**
 * `harness session prune`: `harness/*` branches, worktrees on them or under the worktree root, and folders
 * under the worktree root that no record owns. A record's id (even of a corrupt record) owns `harness/<id>`
 * and `<root>/<id>`; a valid record also owns its git_branch and worktree_dir. Same rules and executor as
 * cleanup (see docs/design.md, "Removal").
 */
export async function pruneOrphans(ctx: SessionEnv, options: PruneOptions): Promise<PruneReport> {
  const paths = await ctx.project()
  const olderThan = options.olderThan ?? { text: DEFAULT_PRUNE_OLDER_THAN, ms: 3_600_000 }
  const root = worktreeRoot(await ctx.config(), paths.root)
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
  const repo = await new RepoCache(ctx.cwd, ctx.env).get(paths.root)
  if (!repo) return report
  const now = (options.now ?? new Date()).getTime()
  const store = await ctx.store()
  const scope: PruneScope = {
    repo,
    owned: ownedBy(store.ids(), paths.exists ? store.list() : [], root),
    root,
    options,
    young: (time) => time !== null && now - time < olderThan.ms,
    tooRecent: (what) => ({
      code: 'TOO_RECENT',
      kind: 'blocked',
      message: `${what} is younger than ${olderThan.text} (a harness run that is still setting up has no record yet)`,
    }),
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
    report.registrations = options.dryRun
      ? await pruneWorktrees(repo.dir, { ...repo.git, dryRun: true })
      : await pruneWorktrees(repo.dir, repo.git)
  }
  return report
}

function ownedBy(ids: string[], records: SessionRecord[], root: string): Owned {
  const branches = new Set<string>(ids.map((id) => `harness/${id}`))
  const paths = new Set<string>(ids.map((id) => canonicalPath(join(root, id))))
  for (const record of records) {
    if (record.git_branch) branches.add(record.git_branch)
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
  const canonicalRoot = canonicalPath(scope.root)
  const underRoot = (path: string) => {
    const rel = relative(canonicalRoot, canonicalPath(path))
    return rel !== '' && !rel.startsWith('..') && !rel.startsWith('/')
  }
  const orphans: Orphan[] = []
  let keepRegistrations = false
  for (const entry of repo.state.worktrees) {
    if (entry.isMain) continue
    const gone = !entry.locked && !existsSync(entry.path)
    const inScope =
      !owned.paths.has(canonicalPath(entry.path)) &&
      !(entry.branch && owned.branches.has(entry.branch)) &&
      (underRoot(entry.path) || Boolean(entry.branch?.startsWith('harness/')))
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
        ? [scope.tooRecent(`worktree ${entry.path}`)]
        : await repo.worktreeReasons(entry, undefined)
    }
    const snapshot = existsSync(entry.path)
      ? { worktreeDir: entry.path }
      : { worktreeHead: entry.head ?? undefined }
    orphans.push({
      item: { kind: 'worktree', path: entry.path, branch: entry.branch },
      candidate: {
        reasons,
        snapshot: orphanSnapshot(repo, refName(basename(entry.path)), 'worktree', entry.path, snapshot),
        steps: [{ kind: 'worktree', repo: repo.dir, entry }],
        describe: entry.path,
      },
      entry,
    })
  }
  return { orphans, keepRegistrations }
}

/** harness/* branches no record owns and no remaining worktree has checked out. */
async function orphanBranches(scope: PruneScope, goingWorktrees: Set<WorktreeInfo>): Promise<Orphan[]> {
  const { repo, owned } = scope
  const orphans: Orphan[] = []
  for (const [name, tip] of repo.state.branches) {
    if (!name.startsWith('harness/') || owned.branches.has(name)) continue
    const reasons: KeepReason[] = []
    // A registration whose folder is gone (and not locked) is dropped by `git worktree prune` afterwards.
    const holder = repo.state.worktrees.find(
      (w) => w.branch === name && !goingWorktrees.has(w) && (w.locked || existsSync(w.path)),
    )
    const created = (await branchCreatedAt(repo.dir, name, repo.git))?.getTime() ?? null
    let mergedInto: string | null = null
    if (holder) {
      reasons.push({
        code: 'BRANCH_CHECKED_OUT',
        kind: 'blocked',
        message: `branch ${name} is checked out in ${holder.path}`,
      })
    } else if (scope.young(created)) {
      reasons.push(scope.tooRecent(`branch ${name}`))
    } else {
      mergedInto = await repo.mergedTarget(name, repo.state.mainTargets)
      if (!mergedInto) reasons.push(await repo.unmergedReason(name, tip, repo.state.mainTargets))
    }
    orphans.push({
      item: { kind: 'branch', path: null, branch: name, commit: tip, merged_into: mergedInto },
      candidate: {
        reasons,
        snapshot: orphanSnapshot(repo, name.slice('harness/'.length), 'branch', name, { branchTip: tip }),
        steps: [{ kind: 'branch', repo: repo.dir, name, tip, dropConfig: repo.state.configured.has(name) }],
        describe: `branch ${name}`,
      },
    })
  }
  return orphans
}

/** Folders under the worktree root that are neither owned nor registered: an empty one goes. */
function orphanFolders(scope: PruneScope): Orphan[] {
  const { repo, owned, root } = scope
  if (!existsSync(root)) return []
  const registered = new Set(repo.state.worktrees.map((w) => canonicalPath(w.path)))
  const orphans: Orphan[] = []
  for (const child of readdirSync(root).sort()) {
    const path = join(root, child)
    const key = canonicalPath(path)
    if (owned.paths.has(key) || registered.has(key)) continue
    const reasons: KeepReason[] = isEmptyDir(path)
      ? scope.young(mtimeOf(path))
        ? [scope.tooRecent(`folder ${path}`)]
        : []
      : [{ code: 'NOT_A_WORKTREE', kind: 'blocked', message: `${path} is not a git worktree: left alone` }]
    orphans.push({
      item: { kind: 'folder', path, branch: null },
      candidate: { reasons, snapshot: null, steps: [{ kind: 'empty-folder', path }], describe: path },
    })
  }
  return orphans
}

function orphanSnapshot(
  repo: RepoView,
  name: string,
  kind: PrunedKind,
  what: string,
  refs: { worktreeDir?: string; worktreeHead?: string; branchTip?: string },
) {
  return { repo: repo.dir, name, ...refs, label: `orphan ${kind} ${what} before prune` }
}

/** The one rule and the one executor, for an orphan; true when it was (or would be) removed. */
async function prune(
  orphan: Orphan,
  report: PruneReport,
  options: PruneOptions,
  git: GitEnvOptions,
): Promise<boolean> {
  const { item, candidate } = orphan
  const result = await executeRemoval(candidate, decideRemoval(candidate.reasons, options.force), {
    dryRun: options.dryRun,
    env: git.env,
  })
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
