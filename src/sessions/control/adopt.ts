import { resolve } from 'node:path'
import { UsageError } from '../../errors.js'
import type { SessionEnv } from '../ports.js'
import { resolveSessionId } from '../query/query.js'
import type { SessionRecord } from '../record/schema.js'

/** What a record names, shown before the user takes responsibility for it (docs/security.md). */
export interface AdoptionItem {
  id: string
  provider: string
  permission: string | null
  worktree: string
  branch: string | null
  args: string[]
  extra_args: string[]
  agent_session_id: string | null
  /** Other sessions whose worktree folder this record names too (a copied or forged record). */
  shares_worktree_with: string[]
  adopted: boolean
}

export interface AdoptionResult {
  adopted: AdoptionItem[]
  /** Already sealed: nothing to do. */
  already_sealed: string[]
}

function describe(record: SessionRecord): Omit<AdoptionItem, 'adopted' | 'shares_worktree_with'> {
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  return {
    id: record.id,
    provider: record.provider,
    permission: record.permission ?? null,
    worktree: record.worktree_dir,
    branch: record.git_branch ?? null,
    args: (record.runs ?? []).flatMap((run) => run.args ?? []),
    extra_args: strings(record.extra_args),
    agent_session_id: record.agent_session_id ?? null,
  }
}

/**
 * `harness session adopt <id>|--all`: seals foreign records on the user's word. Without a terminal to ask on,
 * `--yes` is required; with one, the user confirms after seeing what each record names.
 */
export async function adoptSessions(
  ctx: SessionEnv,
  input: string | undefined,
  options: {
    all: boolean
    yes: boolean
    /** stdin is a terminal to ask on */
    interactive: boolean
    confirm: (items: AdoptionItem[]) => Promise<boolean>
  },
): Promise<AdoptionResult> {
  const store = await ctx.store()
  const ids = options.all ? store.ids() : [resolveSessionId(store, input ?? '')]
  const foreign: SessionRecord[] = []
  const result: AdoptionResult = { adopted: [], already_sealed: [] }
  for (const id of ids) {
    const record = store.get(id)
    if (!record) continue
    if (record.sealed) result.already_sealed.push(id)
    else foreign.push(record)
  }
  if (foreign.length === 0) return result
  const owners = new Map<string, string[]>()
  for (const id of store.ids()) {
    const dir = store.get(id)?.worktree_dir
    if (dir) owners.set(resolve(dir), [...(owners.get(resolve(dir)) ?? []), id])
  }
  const items = foreign.map((record) => ({
    ...describe(record),
    shares_worktree_with: (owners.get(resolve(record.worktree_dir)) ?? []).filter((id) => id !== record.id),
    adopted: false,
  }))
  for (const item of items) {
    if (item.shares_worktree_with.length === 0) continue
    const others = item.shares_worktree_with.map((id) => `"${id}"`).join(', ')
    ctx.warn(
      `session "${item.id}" names the worktree of session ${others} (${item.worktree}): once adopted, its delete, cleanup, restore and merge act on that same folder`,
    )
  }
  if (!options.yes) {
    if (!options.interactive) {
      throw new UsageError(
        'adopting needs --yes when stdin is not a terminal',
        'check what the records name ("harness session show <id>"), then add --yes',
        'CONFIRMATION_REQUIRED',
      )
    }
    if (!(await options.confirm(items))) return { ...result, adopted: items }
  }
  for (const item of items) {
    // Sealed exactly as it is on disk now (re-read under the lock): what was shown is what gets sealed.
    const expected = foreign.find((r) => r.id === item.id)
    await store.update(
      item.id,
      (current) => {
        if (current.rev !== expected?.rev || current.updated_at !== expected?.updated_at) {
          throw new UsageError(`session "${item.id}" changed while it was being adopted: run adopt again`)
        }
        return undefined
      },
      { adopt: true },
    )
    item.adopted = true
  }
  return { ...result, adopted: items }
}
