import { basename, join } from 'node:path'
import { allowedWorktreeRoots } from '../../config.js'
import { IllegalStateError } from '../../errors.js'
import type { BackendState } from '../backends/backend.js'
import { backendOf } from '../backends/index.js'
import { readEnvOf } from '../backends/read-env.js'
import { settleEnded } from '../backends/settle.js'
import type { SessionEnv } from '../ports.js'
import { resolveSessionId, seen } from '../query/query.js'
import { backendStates, markPaused, reconcileView, type SessionView } from '../query/reconcile.js'
import type { Liveness } from '../record/liveness.js'
import type { SessionRecord } from '../record/schema.js'
import { checkIntegrity, type IntegrityProblem, repairIntegrity } from './integrity.js'
import { actEnvOf } from './settle.js'

export interface RecoverCandidate {
  id: string
  /**
   * For a RUNNING session whose liveness is stale, orphaned or unverified; `unsettled`: its run ended with
   * nobody to record it (recover settles it).
   */
  liveness?: Liveness | 'unsettled'
  status: string | null
  provider: string | null
  prompt?: string | null
  /** Its checkpoint chain and worktree (docs/continuity.md, "Recover: integrity"). */
  problems: IntegrityProblem[]
  /** A record file that does not parse or validate: `recover --all` moves it to `.harness/corrupt/`. */
  corrupt?: { path: string; reason: string }
}

/** What a backend's state says of a RUNNING session, as recover lists it (undefined: nothing to recover). */
function stuckAs(state: BackendState | undefined): RecoverCandidate['liveness'] | undefined {
  switch (state?.kind) {
    case 'alive':
      return state.liveness === 'orphaned' ? 'orphaned' : undefined
    case 'stale':
      return 'stale'
    case 'unverified':
      return 'unverified'
    case 'ended':
      return 'unsettled'
    default:
      return undefined
  }
}

/**
 * `session recover --scan` (read only): RUNNING sessions whose liveness is stale, orphaned or unverified, or
 * whose run ended unrecorded; sessions whose checkpoints or worktree are not as recorded; corrupt record files.
 */
export async function scanRecoverable(ctx: SessionEnv): Promise<RecoverCandidate[]> {
  const store = await ctx.store()
  const records = store.list()
  const integrity = await checkIntegrity(records, ctx.env)
  const states = await backendStates(
    records.filter((record) => record.status === 'RUNNING'),
    readEnvOf(store, ...seen(ctx)),
  )
  const found: RecoverCandidate[] = []
  for (const record of records) {
    const liveness = stuckAs(states.get(record))
    const problems = integrity.get(record.id) ?? []
    if (!liveness && problems.length === 0) continue
    found.push({
      id: record.id,
      ...(liveness ? { liveness } : {}),
      status: record.status,
      provider: record.provider,
      prompt: record.prompt,
      problems,
    })
  }
  for (const corrupt of store.corruptRecords()) {
    const id = basename(corrupt.path, '.json')
    found.push({ id, status: null, provider: null, problems: [], corrupt })
  }
  return found.sort((a, b) => (a.id < b.id ? -1 : 1))
}

export interface RecoverResult {
  recovered: SessionView[]
  skipped: { id: string; liveness: Liveness | undefined; reason: string }[]
  /** What was repaired, per session. */
  repaired: { id: string; what: string[] }[]
  /** Problems `recover` cannot repair, per session (reported, left as they are). */
  unrepaired: { id: string; problems: IntegrityProblem[] }[]
  /** Corrupt records moved to `.harness/corrupt/` (by --all). */
  quarantined: { path: string; moved_to: string; report: string }[]
}

/**
 * A RUNNING session recovered as its backend's state says: a stale one reconciled, an unverified one PAUSED on
 * the user's word, one whose run ended settled; null when it lives (it must be killed first).
 */
async function recoverRunning(
  ctx: SessionEnv,
  record: SessionRecord,
  state: BackendState | undefined,
): Promise<SessionRecord | null> {
  const store = await ctx.store()
  const [check, now] = seen(ctx)
  switch (state?.kind) {
    case 'stale':
      return reconcileView(store, record, false, check, now)
    case 'unverified':
      return store.update(record.id, (current) =>
        current.status === 'RUNNING' && current.rev === record.rev
          ? markPaused(current, 'recover', now)
          : undefined,
      )
    case 'ended':
      return settleEnded(await backendOf(record), record, state.exit, await actEnvOf(ctx))
    default:
      return null
  }
}

/**
 * `session recover <id>` / `--all`: marks stale and unverified sessions PAUSED (unverified ones on the user's
 * word), settles those whose run ended unrecorded, repairs checkpoint refs and worktrees where it can, and
 * (--all) moves corrupt records that nothing can repair to `.harness/corrupt/`. Orphaned and running sessions
 * are not marked: their agent is alive and must be killed first.
 */
export async function recoverSessions(
  ctx: SessionEnv,
  input: string | undefined,
  all: boolean,
): Promise<RecoverResult> {
  const store = await ctx.store()
  const scan = all ? await scanRecoverable(ctx) : []
  const ids = all ? scan.filter((c) => !c.corrupt).map((c) => c.id) : [resolveSessionId(store, input ?? '')]
  const result: RecoverResult = { recovered: [], skipped: [], repaired: [], unrepaired: [], quarantined: [] }
  const paths = await ctx.project()
  const worktreeRoots = allowedWorktreeRoots(paths.root, paths.configFile, ctx.env)
  for (const id of ids) {
    let record = store.get(id)
    if (!record) continue
    let acted = false
    if (record.status === 'RUNNING') {
      const state = (await backendStates([record], readEnvOf(store, ...seen(ctx)))).get(record)
      const recovered = await recoverRunning(ctx, record, state)
      if (recovered) {
        record = recovered
        result.recovered.push(recovered)
        acted = true
      } else {
        const liveness = state?.kind === 'alive' ? state.liveness : undefined
        const reason =
          liveness === 'orphaned'
            ? `its agent is still alive (orphaned): run "harness session kill ${id}" first`
            : 'it is running'
        if (!all)
          throw new IllegalStateError(
            `session "${id}" cannot be recovered: ${reason}`,
            undefined,
            'SESSION_ALIVE',
          )
        result.skipped.push({ id, liveness, reason })
      }
    }
    const problems = (await checkIntegrity([record], ctx.env)).get(id) ?? []
    if (problems.length) {
      const repair = await repairIntegrity(record, problems, { env: ctx.env, worktreeRoots })
      if (repair.repaired.length) result.repaired.push({ id, what: repair.repaired })
      if (repair.unrepaired.length) result.unrepaired.push({ id, problems: repair.unrepaired })
      acted = true
    }
    if (!acted && !all) {
      throw new IllegalStateError(
        `session "${id}" is ${record.status}, and its checkpoints and worktree are as recorded: nothing to recover`,
      )
    }
  }
  if (all) {
    const corruptDir = join(paths.harnessDir, 'corrupt')
    for (const candidate of scan) {
      if (!candidate.corrupt) continue
      const moved = await store.quarantine(candidate.id, corruptDir)
      if (moved) result.quarantined.push({ path: candidate.corrupt.path, ...moved })
    }
  }
  return result
}
