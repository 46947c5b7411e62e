import { isAbsolute } from 'node:path'
import { pathExists } from '../../disk/door.js'
import { AmbiguousSessionIdError, IllegalStateError, SessionNotFoundError } from '../../errors.js'
import type { RecordStore, SessionEnv } from '../ports.js'
import { fullPrompt } from '../record/bounds.js'
import { assertValidSessionId, MIN_PREFIX_LENGTH, resolveIdAmong } from '../record/ids.js'
import type { IdentityCheckOf } from '../record/liveness.js'
import type { SessionRecord, SessionStatus } from '../record/schema.js'
import { assertSealed, projectScope, verifiedSession } from '../record/seal.js'
import { reconcileView, reconcileViews, type SessionView } from './reconcile.js'

/**
 * Exact id, else a name (`run --name`), else a unique prefix of at least 4 characters; ambiguous prefixes list
 * the candidates.
 */
export function resolveSessionId(store: RecordStore, input: string): string {
  assertValidSessionId(input)
  if (store.exists(input)) return input
  const named = store.idOfName(input)
  if (named !== null) return named
  const resolution = resolveIdAmong(input, store.ids())
  switch (resolution.kind) {
    case 'exact':
    case 'unique':
      return resolution.id
    case 'ambiguous':
      throw new AmbiguousSessionIdError(input, resolution.candidates)
    case 'none':
      throw new SessionNotFoundError(
        input,
        input.length < MIN_PREFIX_LENGTH
          ? `a prefix needs at least ${MIN_PREFIX_LENGTH} characters; run "harness session list" to see sessions`
          : undefined,
      )
  }
}

/** Loads one session by id or prefix, reconciling it if it is stale. */
export async function getSession(ctx: SessionEnv, input: string, dryRun = false): Promise<SessionView> {
  const store = await ctx.store()
  const id = resolveSessionId(store, input)
  const record = store.get(id)
  if (!record) throw new SessionNotFoundError(id)
  return record.status === 'RUNNING' ? reconcileView(store, record, dryRun, ...seen(ctx)) : record
}

/**
 * The session with its whole prompt where one is needed (show, export, context): a prompt too long for the
 * record is read from its file beside it, checked against the seal's sha256 (docs/security.md, "Limits at
 * write time"); when that file is missing or changed, its first characters are kept and a warning says why.
 */
export async function withFullPrompt<T extends SessionRecord>(ctx: SessionEnv, record: T): Promise<T> {
  if (!record.prompt_file) return record
  const store = await ctx.store()
  const read = fullPrompt(store.dir, record)
  if (read.problem) ctx.warn(`session "${record.id}": ${read.problem}`)
  return { ...record, prompt: read.text }
}

export interface ListFilters {
  status?: SessionStatus[]
  agent?: string[]
  limit?: number
  sort: 'created' | 'updated'
}

/** What a listing sorts by. */
type SortKeys = Pick<SessionView, 'id' | 'created_at' | 'updated_at'>

/** Newest first by created_at (or updated_at), ties broken by id. Each time is parsed once, not per comparison. */
export function sortSessions<T extends SortKeys>(views: T[], sort: 'created' | 'updated' = 'created'): T[] {
  const keyed = views.map((view) => ({
    view,
    time: Date.parse((sort === 'updated' ? view.updated_at : undefined) ?? view.created_at) || 0,
  }))
  keyed.sort((a, b) => b.time - a.time || (a.view.id < b.view.id ? -1 : a.view.id > b.view.id ? 1 : 0))
  return keyed.map((k) => k.view)
}

/**
 * Up to this many records, and this much of their text, a listing holds them all in memory (one read each). A
 * bigger store is listed in two passes, so that memory stays bounded whatever its size (docs/performance.md):
 * the first keeps only each record's sort keys, the second reads, validates and yields the records one at a
 * time in order. 10,000 records as harness writes them are about 32 MB.
 */
const IN_MEMORY_LISTING = 20_000
const IN_MEMORY_LISTING_BYTES = 48 * 1024 * 1024
/**
 * The most record text one listing reads, both passes together (docs/security.md, "Limits at write time"):
 * 100,000 records as harness writes them read about 640 MB. Records past it are not read, and a warning says
 * how many; the rest still show.
 */
const LISTING_READ_BYTES = 1024 * 1024 * 1024

/** The sessions of a listing, in order, produced one at a time (`--json` prints them as they come). */
export async function* listSessions(ctx: SessionEnv, filters: ListFilters): AsyncGenerator<SessionView> {
  yield* listStore(await ctx.store(), filters, IN_MEMORY_LISTING, ...seen(ctx))
}

/** How a service sees processes and time: through its port. */
export function seen(ctx: Pick<SessionEnv, 'processes' | 'clock'>): [IdentityCheckOf, Date] {
  return [(recorded) => ctx.processes.check(recorded), new Date(ctx.clock.now())]
}

export async function* listStore(
  store: RecordStore,
  filters: ListFilters,
  inMemory: number,
  check: IdentityCheckOf,
  now: Date,
): AsyncGenerator<SessionView> {
  const wanted = (view: SessionView) =>
    (!filters.agent || filters.agent.includes(view.provider)) &&
    // On status after reconciling: a stale RUNNING session is PAUSED by now.
    (!filters.status || filters.status.includes(view.status))
  const limit = filters.limit ?? Number.POSITIVE_INFINITY
  // One read of the folder (leftovers swept), and one open of it for all the records (store.listWithin).
  const ids = store.recordIds()
  const all = ids.length <= inMemory ? store.listWithin(IN_MEMORY_LISTING_BYTES, ids) : null
  if (all) {
    const records = all.filter((record) => !filters.agent || filters.agent.includes(record.provider))
    const views = sortSessions(
      (await reconcileViews(store, records, false, check, now)).filter(wanted),
      filters.sort,
    )
    yield* views.slice(0, limit)
    return
  }
  const budget = readBudget(store)
  // RUNNING records are reconciled in the first pass (it may change their updated_at) and kept while they
  // hold little (they are few); one past that is read again in the second pass.
  const entries: (SortKeys & { view?: SessionView })[] = []
  let held = 0
  for (const id of ids) {
    if (budget.spent()) {
      budget.skip()
      continue
    }
    const raw = store.peek(id, { listing: true })
    if (typeof raw?.status === 'string' && raw.status.toUpperCase() === 'RUNNING') {
      const before = store.bytesRead
      const record = store.read(id, { listing: true })
      if (!record) continue
      const view = await reconcileView(store, record, false, check, now)
      held += store.bytesRead - before
      entries.push(held <= IN_MEMORY_LISTING_BYTES ? { ...keysOf(record), view } : keysOf(view))
    } else entries.push({ id, created_at: text(raw?.created_at), updated_at: text(raw?.updated_at) })
  }
  try {
    yield* secondPass(store, sortSessions(entries, filters.sort), { wanted, limit, budget, check, now })
  } finally {
    store.endListing()
  }
  budget.report()
}

/** The records of a listing too big to hold, read again one at a time in their order. */
async function* secondPass(
  store: RecordStore,
  entries: (SortKeys & { view?: SessionView })[],
  { wanted, limit, budget, check, now }: SecondPass,
): AsyncGenerator<SessionView> {
  let shown = 0
  for (const entry of entries) {
    if (shown >= limit) break
    let view = entry.view
    if (!view) {
      if (budget.spent()) {
        budget.skip()
        continue
      }
      const record = store.read(entry.id, { listing: true })
      if (!record) continue
      // Resumed since the first pass: shown with its liveness, reconciled by the next command that reads it.
      view = record.status === 'RUNNING' ? await reconcileView(store, record, true, check, now) : record
    }
    if (!wanted(view)) continue
    shown++
    yield view
  }
}

interface SecondPass {
  wanted: (view: SessionView) => boolean
  limit: number
  budget: ReturnType<typeof readBudget>
  check: IdentityCheckOf
  now: Date
}

/** What one listing may still read (LISTING_READ_BYTES); the records it had to leave out are counted. */
function readBudget(store: RecordStore) {
  const start = store.bytesRead
  let skipped = 0
  return {
    spent: () => store.bytesRead - start > LISTING_READ_BYTES,
    skip: () => {
      skipped++
    },
    report: () => {
      if (skipped === 0) return
      store.warnOnce(
        'listing-budget',
        `${skipped} session records not read: one listing reads at most ${LISTING_READ_BYTES} bytes of records ("harness session show <id>" reads one)`,
      )
    },
  }
}

function keysOf(record: SessionRecord): SortKeys {
  return { id: record.id, created_at: record.created_at, updated_at: record.updated_at }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

/**
 * `session path`: the folder of a verified session, for a shell to `cd` into (docs/security.md, "hcd"). Only a
 * sealed record's, only an absolute path, only inside the project or one of harness's worktree folders: a
 * cloned record's `-`, a CDPATH-relative name or a path elsewhere would send `hcd` wherever it says.
 */
export async function sessionPath(ctx: SessionEnv, input: string): Promise<{ id: string; path: string }> {
  const session = await getSession(ctx, input)
  verifiedSession(session, 'gives its folder to a shell')
  if (!isAbsolute(session.worktree_dir)) {
    throw new IllegalStateError(
      `the folder of session "${session.id}" is not an absolute path: harness never hands it to a shell`,
      undefined,
      'PATH_REFUSED',
    )
  }
  // `cd "$(harness session path …)"` into a folder that is gone would fail later, further from the cause.
  if (!pathExists(session.worktree_dir)) {
    throw new IllegalStateError(
      `the folder of session "${session.id}" no longer exists: ${session.worktree_dir}`,
      await recreationHint(ctx, session),
      'WORKTREE_GONE',
    )
  }
  const paths = await ctx.project()
  const { allowedWorktreeRoots, isInsideRoots } = await import('../../config.js')
  // Real paths (projectScope): inside the project (its own worktrees, a --no-worktree run's folder) needs no
  // config; else a worktree.root of the user's or a trusted config.
  const project = projectScope(paths.root)
  const folder = projectScope(session.worktree_dir)
  const inside =
    folder === project ||
    isInsideRoots(folder, [project]) ||
    isInsideRoots(folder, allowedWorktreeRoots(paths.root, paths.configFile, ctx.env))
  if (!inside) {
    throw new IllegalStateError(
      `the folder of session "${session.id}" is outside the project and harness's worktree folders: ${session.worktree_dir}`,
      'harness hands a shell only folders of its own; "harness session show" shows what the record names',
      'PATH_REFUSED',
    )
  }
  return { id: session.id, path: session.worktree_dir }
}

/** What `session resume` would do about a folder that is gone, as its own plan says (git is only read). */
async function recreationHint(ctx: SessionEnv, session: SessionView): Promise<string> {
  const id = session.id
  if (session.sealed !== true) {
    return `harness does not recreate it: the record is foreign (see "harness session adopt ${id}")`
  }
  const { describeRecreation, planRecreation, recreationFacts } = await import('../recreation.js')
  const verified = assertSealed(session)
  const repoDir = session.base_dir ?? (await ctx.project()).root
  const facts = await recreationFacts(verified, repoDir, ctx.env).catch(() => null)
  if (!facts) {
    return `"harness session resume ${id}" recreates it from its branch ${session.git_branch ?? ''} if git still has it`
  }
  const plan = planRecreation(session, facts)
  return plan.kind === 'none'
    ? `harness cannot recreate it: ${plan.why}; snapshots of its work, if any, are under refs/harness/${id}/`
    : `"harness session resume ${id}" recreates it ${describeRecreation(plan)}`
}
