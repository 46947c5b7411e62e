import { existsSync } from 'node:fs'
import type { Context } from '../cli/context.js'
import { AmbiguousSessionIdError, IllegalStateError, SessionNotFoundError } from '../errors.js'
import { assertValidSessionId, MIN_PREFIX_LENGTH, resolveIdAmong } from './ids.js'
import { reconcileView, reconcileViews, type SessionView } from './reconcile.js'
import type { SessionStatus } from './schema.js'
import type { SessionStore } from './store.js'

/** Exact id, else a unique prefix of at least 4 characters; ambiguous prefixes list the candidates. */
export function resolveSessionId(store: SessionStore, input: string): string {
  assertValidSessionId(input)
  if (store.exists(input)) return input
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
export async function getSession(ctx: Context, input: string, dryRun = false): Promise<SessionView> {
  const store = await ctx.store()
  const id = resolveSessionId(store, input)
  const record = store.get(id)
  if (!record) throw new SessionNotFoundError(id)
  return record.status === 'RUNNING' ? reconcileView(store, record, dryRun) : record
}

export interface ListFilters {
  status?: SessionStatus[]
  agent?: string[]
  limit?: number
  sort: 'created' | 'updated'
}

/** Newest first by created_at (or updated_at), ties broken by id. Each time is parsed once, not per comparison. */
export function sortSessions<T extends SessionView>(
  views: T[],
  sort: 'created' | 'updated' = 'created',
): T[] {
  const keyed = views.map((view) => ({
    view,
    time: Date.parse((sort === 'updated' ? view.updated_at : undefined) ?? view.created_at) || 0,
  }))
  keyed.sort((a, b) => b.time - a.time || (a.view.id < b.view.id ? -1 : a.view.id > b.view.id ? 1 : 0))
  return keyed.map((k) => k.view)
}

export async function listSessions(ctx: Context, filters: ListFilters): Promise<SessionView[]> {
  const store = await ctx.store()
  let records = store.list()
  if (filters.agent) records = records.filter((r) => filters.agent?.includes(r.provider))
  let views = await reconcileViews(store, records)
  // Filter on status after reconciling: a stale RUNNING session is PAUSED by now.
  if (filters.status) views = views.filter((r) => filters.status?.includes(r.status))
  views = sortSessions(views, filters.sort)
  return filters.limit === undefined ? views : views.slice(0, filters.limit)
}

export async function sessionPath(ctx: Context, input: string): Promise<{ id: string; path: string }> {
  const session = await getSession(ctx, input)
  // `cd "$(harness session path …)"` into a folder that is gone would fail later, further from the cause.
  if (!existsSync(session.worktree_dir)) {
    throw new IllegalStateError(
      `the folder of session "${session.id}" no longer exists: ${session.worktree_dir}`,
      session.is_worktree && session.git_branch
        ? `"harness session resume ${session.id}" recreates it from its branch ${session.git_branch}`
        : 'it ran in that folder itself (no worktree of its own), so harness cannot recreate it',
      'WORKTREE_GONE',
    )
  }
  return { id: session.id, path: session.worktree_dir }
}
