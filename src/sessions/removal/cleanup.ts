import { allowedWorktreeRoots, cleanupOlderThan, cleanupOlderThanMs, isInsideRoots } from '../../config.js'
import { durationText } from '../../duration.js'
import { type HarnessError, IllegalStateError, UsageError } from '../../errors.js'
import type { ActEnv } from '../backends/backend.js'
import { backendOf } from '../backends/index.js'
import { actEnv, settleSession } from '../backends/settle.js'
import type { RecordStore, SessionEnv } from '../ports.js'
import { getSession, seen, sortSessions } from '../query/query.js'
import { reconcileViews, type SessionView } from '../query/reconcile.js'
import type { SessionRecord, SessionStatus } from '../record/schema.js'
import { classifyError, decideRemoval } from './decision.js'
import { executeRemoval, executeRemovals, type RemovalResult } from './executor.js'
import { type ProgressReporter, silentProgress } from './progress.js'
import { RepoCache } from './repo-view.js'
import type { KeptSession, RemovalReport, RemovedSession } from './report.js'
import {
  baseBranchOf,
  lastActiveAt,
  planSession,
  type SessionPlan,
  sessionCandidate,
} from './session-plan.js'

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

/**
 * `harness session cleanup`: removes sessions that are not RUNNING and older than the threshold. Each is
 * planned and decided on its own; then they are removed together, in the order snapshot refs (--force) →
 * worktree folders → registrations and, beside them, branches and checkpoint refs → logs → records, so that a
 * crash midway leaves records pointing at whatever is left. Under dryRun nothing at all is written.
 */
export async function cleanupSessions(ctx: SessionEnv, options: CleanupOptions): Promise<RemovalReport> {
  if (options.status?.includes('RUNNING')) {
    throw new UsageError(
      'cleanup never removes RUNNING sessions',
      'stop them first: harness session kill <id>',
    )
  }
  const paths = await ctx.project()
  const olderThan = options.olderThan ?? (await configuredOlderThan(ctx))
  const report = emptyRemovalReport(options.dryRun, olderThan)
  if (!paths.exists) return report
  const store = await ctx.store()
  // The project repository's state is read by git while node reads the records (most sessions' worktrees
  // are in it); only when there is a record to read.
  const repos = new RepoCache(ctx.cwd, ctx.env)
  if (store.ids().length > 0) repos.prefetch(paths.root)
  const selected = await selectOldSessions(ctx, store, options, olderThan.ms)
  report.skipped = selected.skipped
  const candidates = selected.candidates
  // The batched removal checks each worktree's files under its lock anyway: without --force that check is the
  // only one (planning looks only at the sessions it keeps for other reasons). --force snapshots instead of
  // checking, and --dry-run takes no lock, so both look at planning.
  const deferContent = !options.force && !options.dryRun
  const plans = await planSessions(ctx, paths, candidates, { ...options, deferContent }, repos)
  // One batched removal for all of them (docs/development/design.md, "Removal").
  const items: { record: SessionRecord; plan: SessionPlan }[] = []
  for (const [index, plan] of plans.entries()) {
    const record = candidates[index] as SessionRecord
    if (plan instanceof Error) report.kept.push(keptSession(record, null, [classifyError(plan)]))
    else items.push({ record, plan })
  }
  const results = await executeRemovals(
    items.map(({ plan }) => ({
      candidate: sessionCandidate(plan),
      verdict: decideRemoval(plan.reasons, options.force),
    })),
    { dryRun: options.dryRun, store, env: ctx.env },
  )
  for (const [index, { record, plan }] of items.entries()) {
    const result = results[index]
    if (result) reportResult(report, record, plan, result)
  }
  return report
}

/**
 * Plans each candidate (what would go, what would keep it), a few at a time and in order; a failure is that
 * session's own (an Error in its place). Shared by cleanup and archive.
 */
export async function planSessions(
  ctx: SessionEnv,
  paths: { root: string; logsDir: string; configFile: string },
  candidates: SessionRecord[],
  options: { force: boolean; progress?: ProgressReporter; deferContent?: boolean },
  repos?: RepoCache,
): Promise<(SessionPlan | Error)[]> {
  const where = { ...removalScope(ctx, paths, options, repos), deferContent: options.deferContent ?? false }
  const progress = options.progress ?? silentProgress
  const plans: (SessionPlan | Error)[] = []
  try {
    if (!where.deferContent) await checkCleanAhead(candidates, where)
    // Planning asks git about each worktree (status, index): a few sessions at a time, in order.
    let next = 0
    const planner = async () => {
      for (let index = next++; index < candidates.length; index = next++) {
        const record = candidates[index] as SessionRecord
        progress.step(index, candidates.length, record.id)
        plans[index] = await planSession(record, where).catch((error: unknown) =>
          error instanceof Error ? error : new Error(String(error)),
        )
      }
    }
    await Promise.all(Array.from({ length: Math.min(PLAN_CONCURRENCY, candidates.length) }, planner))
    if (where.deferContent) await checkKeptContent(plans, where)
  } finally {
    progress.end()
  }
  return plans
}

/**
 * The sessions cleanup (and archive) would consider: not RUNNING, in `status`, inactive longer than the
 * threshold. Stale RUNNING records are reconciled (in memory under --dry-run) like by any reading command; a
 * session that was RUNNING when read is never taken in the same run, whatever it was reconciled to.
 */
export async function selectOldSessions(
  ctx: Pick<SessionEnv, 'processes' | 'clock'>,
  store: RecordStore,
  options: { status?: SessionStatus[]; dryRun: boolean; now?: Date },
  olderThanMs: number,
): Promise<{ candidates: SessionRecord[]; skipped: NonNullable<RemovalReport['skipped']> }> {
  const records = sortSessions(store.list())
  const wasRunning = new Set(records.filter((r) => r.status === 'RUNNING').map((r) => r.id))
  const [check, seenAt] = seen(ctx)
  const views = await reconcileViews(store, records, options.dryRun, check, seenAt)
  // A run that ended with nobody to record it is settled (its work collected): cleanup acts on what it reads.
  // It was RUNNING when read, so it is not taken in this run either way.
  if (!options.dryRun) await settleUnsettled(store, views, actEnv(store, ctx.processes, check, seenAt))
  const now = (options.now ?? seenAt).getTime()
  const skipped = { running: 0, younger: 0, filtered: 0 }
  const candidates: SessionRecord[] = []
  for (const view of views) {
    if (view.status === 'RUNNING' || wasRunning.has(view.id)) skipped.running++
    else if (options.status && !options.status.includes(view.status)) skipped.filtered++
    else if (now - Date.parse(lastActiveAt(view)) < olderThanMs) skipped.younger++
    else candidates.push(view)
  }
  return { candidates, skipped }
}

/** The views of runs that ended unrecorded, settled by their backends. */
async function settleUnsettled(store: RecordStore, views: SessionView[], env: ActEnv): Promise<void> {
  for (const view of views) {
    const record = view.unsettled ? store.get(view.id) : null
    if (record) await settleSession(await backendOf(record), record, env)
  }
}

/** `harness session delete <id>`: one session, the same rules; a RUNNING one is refused. */
export async function deleteSession(
  ctx: SessionEnv,
  input: string,
  options: { force: boolean; dryRun: boolean },
): Promise<RemovalReport> {
  let session = await getSession(ctx, input, options.dryRun)
  if (session.unsettled && !options.dryRun) {
    // A run that ended unrecorded is settled first: its work collected, then it is deleted as any finished one.
    const store = await ctx.store()
    await settleUnsettled(store, [session], actEnv(store, ctx.processes, ...seen(ctx)))
    session = await getSession(ctx, session.id)
  }
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
  if (session.sealed === false) return deleteForeignRecord(store, session, report)
  const failure = await sessionRemover(ctx, store, paths, options)(session, report)
  if (failure) throw failure
  const kept = report.kept[0]
  if (kept && !options.dryRun) throw sessionKeptError(kept)
  return report
}

/**
 * A record harness did not seal names things that may be anyone's: `delete` removes the record's file alone
 * (under its lock, and only while it is still foreign and not running) and says so (docs/security.md).
 */
async function deleteForeignRecord(
  store: RecordStore,
  session: SessionRecord,
  report: RemovalReport,
): Promise<RemovalReport> {
  if (!report.dry_run) {
    await store.delete(session.id, (current) => {
      if (current.sealed !== false || current.status === 'RUNNING') {
        throw new IllegalStateError(
          `session "${session.id}" changed while it was being deleted`,
          'run the command again',
          'SESSION_CHANGED',
        )
      }
    })
  }
  report.removed.push({
    id: session.id,
    status: session.status,
    last_active_at: lastActiveAt(session),
    worktree: null,
    branch: null,
    log: null,
    forced: false,
    record_only: true,
  })
  return report
}

/**
 * Asks git about the candidates' worktrees many at a time (see `RepoView.checkClean`); planning then spawns
 * git for a worktree only when it has something to report. A failure here only costs time.
 */
async function checkCleanAhead(
  candidates: SessionRecord[],
  where: ReturnType<typeof removalScope>,
): Promise<void> {
  const byRepo = new Map<string, SessionRecord[]>()
  for (const record of candidates) {
    if (record.sealed === false || !(record.is_worktree ?? Boolean(record.git_branch))) continue
    if (!where.isInsideRoots(record.worktree_dir)) continue
    const dir = record.base_dir ?? where.projectRoot
    byRepo.set(dir, [...(byRepo.get(dir) ?? []), record])
  }
  for (const [dir, records] of byRepo) {
    try {
      const repo = await where.repos.get(dir)
      const entries = records.map((r) => repo?.worktreeAt(r.worktree_dir)).filter((e) => e !== undefined)
      await repo?.checkClean(entries)
    } catch {}
  }
}

/**
 * A session kept for another reason is not removed, so no check under a lock will look at its files: they
 * are looked at now (batched, like `checkCleanAhead`), and their reasons go where planning would have put
 * them, so that the report says everything that keeps it.
 */
async function checkKeptContent(
  plans: (SessionPlan | Error)[],
  where: ReturnType<typeof removalScope>,
): Promise<void> {
  const kept = plans.flatMap((plan, index) =>
    !(plan instanceof Error) && plan.contentCheck !== null && plan.reasons.length > 0
      ? [{ plan, index }]
      : [],
  )
  if (kept.length === 0) return
  await checkCleanAhead(
    kept.map(({ plan }) => plan.record),
    where,
  )
  // As planning does: a few at a time; a failure is that session's own, in place of its plan.
  let next = 0
  const checker = async () => {
    for (let i = next++; i < kept.length; i = next++) {
      const { plan, index } = kept[i] as (typeof kept)[number]
      if (!plan.repo || !plan.worktree || !plan.contentCheck) continue
      try {
        plan.reasons.splice(plan.contentCheck.at, 0, ...(await plan.repo.contentReasons(plan.worktree.path)))
        plan.contentCheck = null
      } catch (error) {
        plans[index] = error instanceof Error ? error : new Error(String(error))
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(PLAN_CONCURRENCY, kept.length) }, checker))
}

/** How many sessions are planned at once: each plan waits mostly on git processes. */
const PLAN_CONCURRENCY = 4

function removalScope(
  ctx: SessionEnv,
  paths: { root: string; logsDir: string; configFile: string },
  options: { force: boolean },
  repos = new RepoCache(ctx.cwd, ctx.env),
) {
  const roots = allowedWorktreeRoots(paths.root, paths.configFile, ctx.env)
  // Asked twice per session (ahead of planning, then by its plan): each path is resolved once per command.
  const inside = new Map<string, boolean>()
  // Which sessions name a branch as their base: every record's, read once per command when a branch is planned.
  let bases: Promise<Map<string, string[]>> | undefined
  const basedOn = async (branch: string): Promise<string[]> => {
    bases ??= ctx.store().then((store) => {
      const found = new Map<string, string[]>()
      for (const record of store.list()) {
        const base = baseBranchOf(record)
        if (base) found.set(base, [...(found.get(base) ?? []), record.id])
      }
      return found
    })
    return (await bases).get(branch) ?? []
  }
  return {
    repos,
    basedOn,
    projectRoot: paths.root,
    logsDir: paths.logsDir,
    isInsideRoots: (path: string): boolean => {
      let answer = inside.get(path)
      if (answer === undefined) {
        answer = isInsideRoots(path, roots)
        inside.set(path, answer)
      }
      return answer
    },
    force: options.force,
  }
}

/** Plans, decides and removes one session; returns the error that stopped its removal, if one did. */
function sessionRemover(
  ctx: SessionEnv,
  store: RecordStore,
  paths: { root: string; logsDir: string; configFile: string },
  options: { force: boolean; dryRun: boolean },
) {
  const where = removalScope(ctx, paths, options)
  return async (record: SessionRecord, report: RemovalReport): Promise<Error | undefined> => {
    let plan: SessionPlan
    try {
      plan = await planSession(record, where)
    } catch (error) {
      report.kept.push(keptSession(record, null, [classifyError(error)]))
      return error instanceof Error ? error : new Error(String(error))
    }
    const result = await executeRemoval(sessionCandidate(plan), decideRemoval(plan.reasons, options.force), {
      dryRun: options.dryRun,
      store,
      env: ctx.env,
    })
    return reportResult(report, record, plan, result)
  }
}

/** Adds one session's outcome to the report; returns the error that stopped its removal, if one did. */
export function reportResult(
  report: RemovalReport,
  record: SessionRecord,
  plan: SessionPlan,
  result: RemovalResult,
): Error | undefined {
  if (result.status === 'gone') return undefined
  if (result.snapshot) report.snapshots.push({ id: record.id, ...result.snapshot })
  if (result.status === 'kept') {
    report.kept.push(keptSession(record, plan, result.reasons))
    return result.error
  }
  const log = result.done.some((step) => step.kind === 'file' && step.path === plan.log) ? plan.log : null
  report.removed.push(removedSession(plan, result.forced, log))
  return undefined
}

function removedSession(plan: SessionPlan, forced: boolean, log: string | null): RemovedSession {
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

export function keptSession(
  record: SessionRecord,
  plan: SessionPlan | null,
  reasons: KeptSession['reasons'],
): KeptSession {
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

export async function configuredOlderThan(ctx: SessionEnv): Promise<{ text: string; ms: number }> {
  const config = await ctx.config()
  return { text: durationText(cleanupOlderThan(config), 'd'), ms: cleanupOlderThanMs(config) }
}

/** A cleanup-shaped report with nothing in it yet (cleanup's, and archive's before its archive is written). */
export function emptyRemovalReport(dryRun: boolean, olderThan: { text: string; ms: number }): RemovalReport {
  return {
    dry_run: dryRun,
    older_than: olderThan.text,
    older_than_ms: olderThan.ms,
    removed: [],
    kept: [],
    snapshots: [],
    skipped: { running: 0, younger: 0, filtered: 0 },
  }
}
