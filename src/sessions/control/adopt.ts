import { resolve } from 'node:path'
import { UsageError } from '../../errors.js'
import type { SessionEnv } from '../ports.js'
import { resolveSessionId } from '../query/query.js'
import type { SessionRecord } from '../record/schema.js'

/** What a record names, shown before the user takes responsibility for it (docs/security.md, "Adopt"). */
export interface AdoptionItem {
  id: string
  provider: string
  permission: string | null
  worktree: string
  branch: string | null
  args: string[]
  extra_args: string[]
  agent_session_id: string | null
  /**
   * Every field the seal will cover that harness acts on, as it will be sealed: the record's fields but those
   * in `NOT_SHOWN` (`branch_created` as adopt seals it). A field harness did not know when this was written is
   * shown too, so that no new field can be sealed unseen.
   */
  fields: Record<string, unknown>
  /** Whether cleanup may delete the record's branch once it is adopted (see `mayDeleteBranch`). */
  may_delete_branch: boolean
  /** Other sessions whose worktree folder this record names too (a copied or forged record). */
  shares_worktree_with: string[]
  adopted: boolean
}

export interface AdoptionResult {
  adopted: AdoptionItem[]
  /** Already sealed: nothing to do. */
  already_sealed: string[]
}

/**
 * The fields adopt does not show, each because harness acts on nothing it says (it is displayed, summed or
 * counted), or because sealing replaces it. Everything else a record holds is shown, including fields this
 * version does not know: test/unit/sessions/control/adopt.test.ts fails for a field of the schema that is
 * neither shown nor listed here.
 */
export const NOT_SHOWN = [
  // Text and times for people; the counts and costs of stats and export.
  'prompt',
  'task_hash',
  'created_at',
  'updated_at',
  'completed_at',
  'merged_at',
  'files_modified',
  'cost',
  'log_error',
  'state',
  // The store's own bookkeeping, and the seal itself, which adopt replaces.
  'schema_version',
  'rev',
  'seal',
  'sealed',
  'seal_problem',
  'project',
  'seal_key',
] as const satisfies readonly (keyof SessionRecord)[]

const NOT_SHOWN_SET: ReadonlySet<string> = new Set(NOT_SHOWN)

/**
 * Whether an adopted record may keep `branch_created: true`, the claim that lets cleanup delete its branch
 * (docs/security.md, "Adopt"): only for harness's own name for this session, `harness/<id>`, and only when that
 * branch is not the record's own base. A branch of any other name may be the user's; harness cannot prove it
 * made it, so adoption seals `branch_created: false` and cleanup keeps the branch.
 */
export function mayDeleteBranch(record: SessionRecord): boolean {
  const branch = record.git_branch
  if (record.branch_created !== true || branch !== `harness/${record.id}`) return false
  const base = typeof record.base_ref === 'string' ? record.base_ref.replace(/^refs\/heads\//, '') : null
  return base !== branch
}

/** The record as adopt seals it: as it is, but for a `branch_created` it cannot keep. */
function asAdopted(record: SessionRecord): SessionRecord {
  return record.branch_created === true && !mayDeleteBranch(record)
    ? { ...record, branch_created: false }
    : record
}

function describe(record: SessionRecord): Omit<AdoptionItem, 'adopted' | 'shares_worktree_with'> {
  const strings = (value: unknown) =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
  const sealed = asAdopted(record)
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(sealed)) {
    if (!NOT_SHOWN_SET.has(key) && value !== undefined) fields[key] = value
  }
  return {
    id: record.id,
    provider: record.provider,
    permission: record.permission ?? null,
    worktree: record.worktree_dir,
    branch: record.git_branch ?? null,
    args: Array.isArray(record.runs) ? record.runs.flatMap((run) => strings(run?.args)) : [],
    extra_args: strings(record.extra_args),
    agent_session_id: record.agent_session_id ?? null,
    fields,
    may_delete_branch: mayDeleteBranch(record),
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
        const adopted = asAdopted(current)
        return adopted === current ? undefined : adopted
      },
      { adopt: true },
    )
    item.adopted = true
  }
  return { ...result, adopted: items }
}
