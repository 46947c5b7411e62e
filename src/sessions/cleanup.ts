import { existsSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs'
import { dirname, isAbsolute, join, relative } from 'node:path'
import type { Context } from '../cli/context.js'
import {
  allowedWorktreeRoots,
  cleanupOlderThanMs,
  DEFAULT_CLEANUP_OLDER_THAN,
  isInsideRoots,
  loadConfig,
} from '../config.js'
import { HarnessError, IllegalStateError, SessionNotFoundError, UsageError } from '../errors.js'
import { canonicalPath, run, splitZ } from '../git/common.js'
import {
  branchesMergedInto,
  countCommitsNotIn,
  deleteBranchAt,
  isAncestor,
  onSomeBranch,
  type RemovalState,
  readRemovalState,
  refsUnder,
  removeListedWorktree,
} from '../git/removal.js'
import { snapshotRef, snapshotWorktree } from '../git/snapshot.js'
import { worktreeChanges } from '../git/worktree.js'
import type { WorktreeInfo } from '../git/worktree-list.js'
import { removeAgentDir } from './agent-files.js'
import { lastRun } from './liveness.js'
import { type ProgressReporter, silentProgress } from './progress.js'
import { getSession, sortSessions } from './query.js'
import { reconcileViews } from './reconcile.js'
import { logPathFor } from './runner.js'
import type { SessionRecord, SessionStatus } from './schema.js'
import type { SessionStore } from './store.js'

/**
 * Why something was kept:
 * - `unsafe`: removing it would lose work (uncommitted files, unmerged commits); `--force` snapshots it under
 *   refs/harness/<id>/ first and then removes it;
 * - `blocked`: harness does not remove it even with `--force` (locked, checked out elsewhere, moved, running);
 * - `error`: something failed; what was not removed yet is still there, the record included.
 */
export type ReasonKind = 'unsafe' | 'blocked' | 'error'

export interface KeepReason {
  /** Stable, for scripts: DIRTY, UNMERGED, DETACHED_HEAD, LOCKED, BRANCH_CHECKED_OUT, BRANCH_MOVED, … */
  code: string
  kind: ReasonKind
  message: string
}

export interface SnapshotRefs {
  /** The refs stored (under --dry-run: that would be stored). */
  refs: { worktree?: string; branch?: string }
  /** What they point at; the worktree snapshot's commit is null under --dry-run (not made yet). */
  commits: { worktree?: string | null; branch?: string | null }
  /** Shell commands that bring the work back. */
  restore: string[]
}

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

export interface CleanupOptions {
  /** The threshold; undefined means `cleanup.older_than` from the config, else 7 days. */
  olderThan?: { text: string; ms: number }
  status?: SessionStatus[]
  force: boolean
  dryRun: boolean
  now?: Date
  /** Told which session is being handled, for a progress line. */
  progress?: ProgressReporter
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

/**
 * `harness session cleanup`: removes sessions that are not RUNNING and older than the threshold, one at a
 * time, each in the order snapshot refs (--force) → worktree → branch → log → record, so that a crash midway
 * leaves a record pointing at whatever is left. Under dryRun nothing at all is written.
 */
export async function cleanupSessions(ctx: Context, options: CleanupOptions): Promise<RemovalReport> {
  if (options.status?.includes('RUNNING')) {
    throw new UsageError(
      'cleanup never removes RUNNING sessions',
      'stop them first: harness session kill <id>',
    )
  }
  const paths = await ctx.project()
  const olderThan = options.olderThan ?? configuredOlderThan(ctx, paths.configFile)
  const report: RemovalReport = {
    dry_run: options.dryRun,
    older_than: olderThan.text,
    older_than_ms: olderThan.ms,
    removed: [],
    kept: [],
    snapshots: [],
    skipped: { running: 0, younger: 0, filtered: 0 },
  }
  if (!paths.exists) return report
  const store = await ctx.store()
  const records = sortSessions(store.list())
  const wasRunning = new Set(records.filter((r) => r.status === 'RUNNING').map((r) => r.id))
  // Stale RUNNING records are reconciled (in memory under --dry-run) like by any reading command; a session
  // that was RUNNING when read is never removed in the same run, whatever it was reconciled to.
  const views = await reconcileViews(store, records, options.dryRun)
  const now = (options.now ?? new Date()).getTime()
  const skipped = { running: 0, younger: 0, filtered: 0 }
  const candidates: SessionRecord[] = []
  for (const view of views) {
    if (view.status === 'RUNNING' || wasRunning.has(view.id)) skipped.running++
    else if (options.status && !options.status.includes(view.status)) skipped.filtered++
    else if (now - Date.parse(lastActiveAt(view)) < olderThan.ms) skipped.younger++
    else candidates.push(view)
  }
  report.skipped = skipped
  const roots = allowedWorktreeRoots(paths.root, paths.configFile, ctx.env)
  const remover = new SessionRemover(store, paths.root, paths.logsDir, roots, options, ctx.cwd)
  const progress = options.progress ?? silentProgress
  try {
    for (const [index, record] of candidates.entries()) {
      progress.step(index, candidates.length, record.id)
      await remover.process(record, report)
    }
  } finally {
    progress.end()
  }
  return report
}

/** `harness session delete <id>`: one session, the same rules; a RUNNING one is refused. */
export async function deleteSession(
  ctx: Context,
  input: string,
  options: { force: boolean; dryRun: boolean },
): Promise<RemovalReport> {
  const session = await getSession(ctx, input, options.dryRun)
  if (session.status === 'RUNNING') {
    throw new IllegalStateError(
      `session "${session.id}" is running${session.liveness && session.liveness !== 'running' ? ` (${session.liveness})` : ''}: it is never deleted`,
      session.liveness === 'unverified'
        ? `if it is really gone, run "harness session recover ${session.id}" first`
        : `stop it first: harness session kill ${session.id}`,
      'SESSION_RUNNING',
    )
  }
  const paths = await ctx.project()
  const store = await ctx.store()
  const report: RemovalReport = { dry_run: options.dryRun, removed: [], kept: [], snapshots: [] }
  const roots = allowedWorktreeRoots(paths.root, paths.configFile, ctx.env)
  const remover = new SessionRemover(store, paths.root, paths.logsDir, roots, options, ctx.cwd)
  const failure = await remover.process(session, report)
  if (failure) throw failure
  const kept = report.kept[0]
  if (kept && !options.dryRun) throw sessionKeptError(kept)
  return report
}

function sessionKeptError(kept: KeptSession): HarnessError {
  const forceable = kept.reasons.every((r) => r.kind === 'unsafe')
  return new IllegalStateError(
    `session "${kept.id}" was kept: ${kept.reasons.map((r) => r.message).join('; ')}`,
    forceable
      ? `"harness session delete ${kept.id} --force" stores a snapshot under refs/harness/${kept.id}/ first, then removes it`
      : undefined,
    'SESSION_KEPT',
  )
}

function configuredOlderThan(ctx: Context, configFile: string): { text: string; ms: number } {
  const config = loadConfig({ projectConfigFile: configFile, env: ctx.env })
  return { text: config.cleanup?.older_than ?? DEFAULT_CLEANUP_OLDER_THAN, ms: cleanupOlderThanMs(config) }
}

/** One repository as cleanup sees it: read once, with merge answers cached per target. */
export class RepoView {
  private readonly merged = new Map<string, Promise<Set<string>>>()
  private byPath: Map<string, WorktreeInfo> | undefined

  constructor(
    readonly state: RemovalState,
    /** The directory harness runs in: a worktree that holds it is not pulled from under the user's shell. */
    private readonly cwd: string,
  ) {}

  get dir(): string {
    return this.state.repo
  }

  worktreeAt(path: string): WorktreeInfo | undefined {
    this.byPath ??= new Map(this.state.worktrees.map((w) => [canonicalPath(w.path), w]))
    return this.byPath.get(canonicalPath(path))
  }

  mergedInto(target: string): Promise<Set<string>> {
    let set = this.merged.get(target)
    if (!set) {
      set = branchesMergedInto(this.dir, target)
      this.merged.set(target, set)
    }
    return set
  }

  /** The first of `targets` that contains every commit of `branch`, as a short name; null if none does. */
  async mergedTarget(branch: string, targets: string[]): Promise<string | null> {
    for (const target of targets) if ((await this.mergedInto(target)).has(branch)) return shortRef(target)
    return null
  }

  /**
   * Worktree and branch facts that make removing it lose work, as reasons. `mayForce`: the removal may use
   * `--force`, which (unlike a plain `git worktree remove`) also deletes checked-out submodules.
   */
  async worktreeReasons(
    entry: WorktreeInfo,
    branchTip: string | undefined,
    mayForce = false,
  ): Promise<KeepReason[]> {
    const reasons: KeepReason[] = []
    if (entry.isMain) {
      return [{ code: 'MAIN_WORKTREE', kind: 'blocked', message: `${entry.path} is the main worktree` }]
    }
    // A locked worktree may live on a device that is not mounted right now: never removed.
    if (entry.locked) {
      return [
        {
          code: 'LOCKED',
          kind: 'blocked',
          message: `worktree ${entry.path} is locked${entry.lockedReason ? ` (${entry.lockedReason})` : ''}: unlock it with "git worktree unlock"`,
        },
      ]
    }
    // Only its registration is left, but that may be all that keeps a detached HEAD's commits reachable.
    if (!existsSync(entry.path)) return this.detachedReasons(entry, branchTip)
    const rel = relative(canonicalPath(entry.path), canonicalPath(this.cwd))
    if (!rel.startsWith('..') && !isAbsolute(rel)) {
      return [
        {
          code: 'CURRENT_DIRECTORY',
          kind: 'blocked',
          message: `worktree ${entry.path} holds the current directory: run the command from elsewhere`,
        },
      ]
    }
    if (!existsSync(join(entry.path, '.git'))) {
      // git would look upwards and report on the enclosing repository instead.
      return [
        {
          code: 'NOT_A_WORKTREE',
          kind: 'blocked',
          message: `${entry.path} has lost its .git file: left alone`,
        },
      ]
    }
    const entries = await worktreeChanges(entry.path)
    const changes = entries.length
    // A nested repository (untracked, or a checked-out submodule) keeps its files and commits in its own
    // git dir, which no snapshot of this worktree can hold: never removed, even with --force.
    const nested = entries
      .filter((e) => e.startsWith('?? ') && e.endsWith('/'))
      .map((e) => e.slice(3, -1))
      .filter((path) => existsSync(join(entry.path, path, '.git')))
    if (mayForce) nested.push(...(await checkedOutSubmodules(entry.path)))
    if (nested.length > 0) {
      reasons.push({
        code: 'NESTED_REPO',
        kind: 'blocked',
        message: `worktree ${entry.path} holds ${nested.length === 1 ? 'a git repository' : 'git repositories'} (${nested.join(', ')}) whose work a snapshot cannot keep: move ${nested.length === 1 ? 'it' : 'them'} out first`,
      })
    }
    if (changes > 0) {
      reasons.push({
        code: 'DIRTY',
        kind: 'unsafe',
        message: `worktree ${entry.path} has ${changes} uncommitted or untracked ${changes === 1 ? 'file' : 'files'}`,
      })
    }
    reasons.push(...(await this.detachedReasons(entry, branchTip)))
    return reasons
  }

  private async detachedReasons(entry: WorktreeInfo, branchTip: string | undefined): Promise<KeepReason[]> {
    if (!entry.detached || !entry.head || entry.head === branchTip) return []
    if (await onSomeBranch(this.dir, entry.head)) return []
    return [
      {
        code: 'DETACHED_HEAD',
        kind: 'unsafe',
        message: `worktree ${entry.path} has a detached HEAD (${entry.head.slice(0, 12)}) that no branch contains`,
      },
    ]
  }
}

/** Tracked submodules of a worktree that are checked out (their folder holds a .git). */
async function checkedOutSubmodules(dir: string): Promise<string[]> {
  const result = await run(['ls-files', '--stage', '-z'], dir, {})
  const paths: string[] = []
  for (const line of splitZ(result.stdout)) {
    if (!line.startsWith('160000 ')) continue
    const path = line.slice(line.indexOf('\t') + 1)
    if (existsSync(join(dir, path, '.git'))) paths.push(path)
  }
  return paths
}

export function shortRef(ref: string): string {
  return ref.replace(/^refs\/(heads|remotes)\//, '')
}

/** Reads repositories once each; null for a folder that is gone or not a repository. */
export class RepoCache {
  private readonly repos = new Map<string, Promise<RepoView | null>>()

  constructor(private readonly cwd: string) {}

  get(dir: string): Promise<RepoView | null> {
    const key = canonicalPath(dir)
    let repo = this.repos.get(key)
    if (!repo) {
      repo = openRepo(dir, this.cwd)
      this.repos.set(key, repo)
    }
    return repo
  }
}

async function openRepo(dir: string, cwd: string): Promise<RepoView | null> {
  if (!existsSync(dir)) return null
  try {
    return new RepoView(await readRemovalState(dir), cwd)
  } catch (error) {
    if (error instanceof HarnessError && error.code === 'GIT_FAILED') return null
    throw error
  }
}

/** A word for the shell: as is when safe, else single-quoted. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`
}

/**
 * Stores what --force is about to remove under refs/harness/<name>/: `worktree` (a commit of every file,
 * untracked ones included, on top of the worktree's HEAD) and `branch` (the tip). Existing refs are never
 * overwritten: a taken name gets a suffix (`worktree-2`). Under dryRun only the names are worked out.
 */
export async function storeSnapshots(
  repo: string,
  name: string,
  what: {
    worktreeDir?: string
    /** The HEAD of a worktree whose folder is gone: kept as the `worktree` snapshot, when there is no folder. */
    worktreeHead?: string
    branchTip?: string
    label: string
  },
  dryRun: boolean,
): Promise<SnapshotRefs> {
  const prefix = `refs/harness/${name}`
  const taken = await refsUnder(repo, `${prefix}/`)
  const free = (base: string) => {
    const used = (ref: string) => taken.some((t) => t === ref || t.startsWith(`${ref}/`))
    let ref = `${prefix}/${base}`
    for (let n = 2; used(ref); n++) ref = `${prefix}/${base}-${n}`
    return ref
  }
  const result: SnapshotRefs = { refs: {}, commits: {}, restore: [] }
  const git = `git -C ${shellWord(repo)}`
  if (what.branchTip) {
    const ref = free('branch')
    result.refs.branch = ref
    result.commits.branch = what.branchTip
    if (!dryRun) {
      await snapshotRef(repo, ref, what.branchTip, { message: `harness: ${what.label}: branch tip` })
    }
    result.restore.push(`${git} branch ${shellWord(`restore-${name}`)} ${ref}`)
  }
  if (what.worktreeDir) {
    const ref = free('worktree')
    result.refs.worktree = ref
    result.commits.worktree = null
    if (!dryRun) {
      const snapshot = await snapshotWorktree({
        worktreeDir: what.worktreeDir,
        ref,
        message: `harness: ${what.label}: every file of ${what.worktreeDir}`,
      })
      result.commits.worktree = snapshot.commit
    }
    result.restore.push(`${git} worktree add ${shellWord(what.worktreeDir)} ${ref}`)
  } else if (what.worktreeHead) {
    const ref = free('worktree')
    result.refs.worktree = ref
    result.commits.worktree = what.worktreeHead
    if (!dryRun) {
      await snapshotRef(repo, ref, what.worktreeHead, { message: `harness: ${what.label}: worktree HEAD` })
    }
    result.restore.push(`${git} branch ${shellWord(`restore-${name}-head`)} ${ref}`)
  }
  return result
}

interface SessionPlan {
  record: SessionRecord
  repo: RepoView | null
  /** A registered worktree to remove, or (entry null) an empty folder left where the worktree was. */
  worktree: { path: string; entry: WorktreeInfo | null } | null
  branch: { name: string; tip: string; mergedInto: string | null; configured: boolean } | null
  reasons: KeepReason[]
}

/** Assesses and removes sessions one by one, filling a report. */
class SessionRemover {
  private readonly repos: RepoCache

  constructor(
    private readonly store: SessionStore,
    private readonly projectRoot: string,
    private readonly logsDir: string,
    /** Where worktrees may be removed from (docs/security.md). */
    private readonly roots: string[],
    private readonly options: { force: boolean; dryRun: boolean },
    cwd: string,
  ) {
    this.repos = new RepoCache(cwd)
  }

  /** Returns the error that stopped a removal, if one did (it is also in the report as a reason). */
  async process(record: SessionRecord, report: RemovalReport): Promise<HarnessError | Error | undefined> {
    let plan: SessionPlan
    try {
      plan = await this.assess(record)
    } catch (error) {
      report.kept.push(this.kept(record, null, [errorReason(error)]))
      return asError(error)
    }
    const unsafe = plan.reasons.filter((r) => r.kind === 'unsafe')
    const hard = plan.reasons.filter((r) => r.kind !== 'unsafe')
    if (hard.length > 0 || (unsafe.length > 0 && !this.options.force)) {
      report.kept.push(this.kept(record, plan, plan.reasons))
      return undefined
    }
    const forced = unsafe.length > 0
    if (this.options.dryRun) {
      if (forced) await this.snapshot(plan, report)
      report.removed.push(this.removed(plan, forced, this.logPath(record.id)))
      return undefined
    }
    try {
      return await this.remove(plan, forced, report)
    } catch (error) {
      report.kept.push(this.kept(record, plan, [errorReason(error)]))
      return asError(error)
    }
  }

  private async assess(record: SessionRecord): Promise<SessionPlan> {
    const plan: SessionPlan = { record, repo: null, worktree: null, branch: null, reasons: [] }
    if (record.sealed === false) {
      // Shown, never acted on: what a record harness did not seal names may be anyone's (docs/security.md).
      plan.reasons.push({
        code: 'FOREIGN',
        kind: 'blocked',
        message: `the record was not sealed by harness for this user: its worktree, branch and log are left alone (check it, then "harness session adopt ${record.id}")`,
      })
      return plan
    }
    const hasWorktree = record.is_worktree ?? Boolean(record.git_branch)
    if (!hasWorktree) return plan // ran in a plain folder: only the record and the log are its own
    const repoDir = record.base_dir ?? this.projectRoot
    const repo = await this.repos.get(repoDir)
    if (!repo) {
      const present = existsSync(record.worktree_dir)
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
    const found = repo.worktreeAt(record.worktree_dir)
    const contained = isInsideRoots(record.worktree_dir, this.roots)
    if (
      (found && (found.isMain || !contained)) ||
      (!found && !contained && existsSync(record.worktree_dir))
    ) {
      plan.reasons.push({
        code: 'OUTSIDE_WORKTREE_ROOT',
        kind: 'blocked',
        message: `${record.worktree_dir} is not a worktree under harness's worktree root: left alone`,
      })
    }
    const entry = found && !found.isMain && contained ? found : undefined
    if (entry) {
      plan.worktree = { path: entry.path, entry }
      plan.reasons.push(...(await repo.worktreeReasons(entry, tip, this.options.force)))
    } else if (contained && existsSync(record.worktree_dir)) {
      if (isEmptyDir(record.worktree_dir)) plan.worktree = { path: record.worktree_dir, entry: null }
      else {
        plan.reasons.push({
          code: 'NOT_A_WORKTREE',
          kind: 'blocked',
          message: `${record.worktree_dir} is not a worktree of ${repo.dir}: left alone`,
        })
      }
    }
    // A branch is deleted only if this session made it (docs/security.md); one it did not make is not its loss.
    if (name && tip && record.branch_created === true) {
      const holder = repo.state.worktrees.find((w) => w.branch === name && w !== entry)
      if (holder) {
        plan.reasons.push({
          code: 'BRANCH_CHECKED_OUT',
          kind: 'blocked',
          message: `branch ${name} is checked out in ${holder.path}`,
        })
      }
      const targets = this.mergeTargets(record, repo)
      let mergedInto = await repo.mergedTarget(name, targets)
      const base = record.base_commit ?? undefined
      if (!mergedInto && base && (tip === base || (await isAncestor(repo.dir, tip, base)))) {
        mergedInto = 'base_commit'
      }
      if (!mergedInto) plan.reasons.push(await unmergedReason(repo, name, tip, targets, base))
      plan.branch = { name, tip, mergedInto, configured: repo.state.configured.has(name) }
    }
    return plan
  }

  /**
   * "Merged into its base" means reachable from: the recorded base_ref when it is a local or remote-tracking
   * branch that still exists, the branch checked out in the main worktree, or that branch's upstream.
   */
  private mergeTargets(record: SessionRecord, repo: RepoView): string[] {
    const targets: string[] = []
    const baseRef = typeof record.base_ref === 'string' ? record.base_ref.replace(/^refs\/heads\//, '') : null
    if (baseRef && repo.state.branches.has(baseRef)) targets.push(`refs/heads/${baseRef}`)
    else if (baseRef && repo.state.remotes.has(shortRef(baseRef)))
      targets.push(`refs/remotes/${shortRef(baseRef)}`)
    for (const target of repo.state.mainTargets) if (!targets.includes(target)) targets.push(target)
    return targets
  }

  private async remove(
    plan: SessionPlan,
    forced: boolean,
    report: RemovalReport,
  ): Promise<HarnessError | Error | undefined> {
    const { record } = plan
    const id = record.id
    const unchanged = (current: SessionRecord) =>
      current.status !== 'RUNNING' && current.rev === record.rev && current.updated_at === record.updated_at
    // Everything happens under the record's lock, so a resume cannot start the session halfway through.
    let logRemoved: string | null = null
    let keptDirty = false
    try {
      await this.store.delete(id, async (current) => {
        if (!unchanged(current)) throw new SessionChangedError(current)
        if (forced) await this.snapshot(plan, report)
        const repo = plan.repo
        if (plan.worktree && repo) {
          const { entry, path } = plan.worktree
          if (entry) {
            const outcome = await removeListedWorktree(repo.dir, entry, { force: forced })
            if (outcome === 'dirty') {
              keptDirty = true
              throw new SessionChangedError(current)
            }
          } else {
            try {
              rmdirSync(path)
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
            }
          }
        }
        if (plan.branch && repo) {
          await deleteBranchAt(repo.dir, plan.branch.name, plan.branch.tip, {
            dropConfig: plan.branch.configured,
          })
        }
        const log = logPathFor(this.logsDir, id)
        try {
          unlinkSync(log)
          logRemoved = log
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        }
        // The agent's own files (pi's session file, aider's history) go with the session (docs/providers.md).
        removeAgentDir(dirname(this.logsDir), id)
        // So do its checkpoints (docs/continuity.md); the --force snapshots above stay.
        if (repo && current.checkpoints?.length) {
          const { deleteRefs } = await import('../git/checkpoint.js')
          await deleteRefs(
            repo.dir,
            `refs/harness/${id}/checkpoints/`,
            current.checkpoints.map((c) => c.ref),
          )
        }
      })
    } catch (error) {
      if (error instanceof SessionNotFoundError) return undefined // someone else deleted it meanwhile
      if (!(error instanceof SessionChangedError)) throw error
      const reason: KeepReason = keptDirty
        ? {
            code: 'DIRTY',
            kind: 'unsafe',
            message: `worktree ${plan.worktree?.path} changed while it was being removed: it has uncommitted or untracked files`,
          }
        : changedReason(error.current)
      report.kept.push(this.kept(record, plan, [reason]))
      return undefined
    }
    report.removed.push(this.removed(plan, forced, logRemoved))
    return undefined
  }

  private async snapshot(plan: SessionPlan, report: RemovalReport): Promise<void> {
    const repo = plan.repo
    if (!repo) return
    const entry = plan.worktree?.entry
    const worktreeDir = entry && !entry.isMain && existsSync(entry.path) ? entry.path : undefined
    const worktreeHead = entry && !worktreeDir && entry.detached ? (entry.head ?? undefined) : undefined
    const branchTip = plan.branch?.tip
    if (!worktreeDir && !worktreeHead && !branchTip) return
    const refs = await storeSnapshots(
      repo.dir,
      plan.record.id,
      { worktreeDir, worktreeHead, branchTip, label: `session ${plan.record.id} before removal` },
      this.options.dryRun,
    )
    report.snapshots.push({ id: plan.record.id, ...refs })
  }

  private logPath(id: string): string | null {
    const path = logPathFor(this.logsDir, id)
    return existsSync(path) ? path : null
  }

  private removed(plan: SessionPlan, forced: boolean, log: string | null): RemovedSession {
    const { record } = plan
    return {
      id: record.id,
      status: record.status,
      last_active_at: lastActiveAt(record),
      worktree: plan.worktree?.path ?? null,
      branch: plan.branch
        ? { name: plan.branch.name, commit: plan.branch.tip, merged_into: plan.branch.mergedInto }
        : null,
      log,
      forced,
    }
  }

  private kept(record: SessionRecord, plan: SessionPlan | null, reasons: KeepReason[]): KeptSession {
    const hasWorktree = record.is_worktree ?? Boolean(record.git_branch)
    return {
      id: record.id,
      status: record.status,
      last_active_at: lastActiveAt(record),
      worktree: plan?.worktree?.path ?? (hasWorktree ? record.worktree_dir : null),
      branch: plan?.branch?.name ?? record.git_branch ?? null,
      reasons,
    }
  }
}

async function unmergedReason(
  repo: RepoView,
  name: string,
  tip: string,
  targets: string[],
  base: string | undefined,
): Promise<KeepReason> {
  const into = targets.map(shortRef)
  let count: number | null = null
  try {
    count = await countCommitsNotIn(repo.dir, tip, [...targets, ...(base ? [base] : [])])
  } catch {
    // A base commit that is gone: the count is unknown, the branch is unmerged all the same.
  }
  const commits = count === null ? 'commits' : `${count} ${count === 1 ? 'commit' : 'commits'}`
  return {
    code: 'UNMERGED',
    kind: 'unsafe',
    message: `branch ${name} has ${commits} not merged into ${into.length ? into.join(' or ') : 'any base branch'}`,
  }
}

function changedReason(current: SessionRecord): KeepReason {
  return {
    code: 'SESSION_CHANGED',
    kind: 'blocked',
    message:
      current.status === 'RUNNING'
        ? 'it was resumed meanwhile (now RUNNING)'
        : 'its record changed meanwhile: run the command again',
  }
}

/** Vetoes a removal under the lock: the record changed (or the worktree became dirty) since it was assessed. */
class SessionChangedError extends Error {
  constructor(readonly current: SessionRecord) {
    super(`session "${current.id}" changed meanwhile`)
  }
}

function errorReason(error: unknown): KeepReason {
  if (error instanceof HarnessError) {
    const blocking = [
      'BRANCH_MOVED',
      'SESSION_CHANGED',
      'WORKTREE_LOCKED',
      'MAIN_WORKTREE',
      'SESSION_RUNNING',
    ]
    return {
      code: error.code,
      kind: blocking.includes(error.code) ? 'blocked' : 'error',
      message: error.message,
    }
  }
  return {
    code: 'UNEXPECTED',
    kind: 'error',
    message: error instanceof Error ? error.message : String(error),
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error))
}

function isEmptyDir(path: string): boolean {
  try {
    return readdirSync(path).length === 0
  } catch {
    return false
  }
}
