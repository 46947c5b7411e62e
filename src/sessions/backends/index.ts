import type { BackendName } from '../../backend-names.js'
import { UsageError } from '../../errors.js'
import type { SessionRecord } from '../record/schema.js'
import type { BackendSupport, SessionBackend } from './backend.js'

/**
 * The picker (as pnpm's `pick-fetcher`): the one place that reads a backend's name, from a record or from the
 * flags and config of a new run. Each backend module is loaded only when a session uses it.
 */
const LOADERS: Record<BackendName, () => Promise<SessionBackend>> = {
  local: async () => (await import('./local/index.js')).localBackend,
  container: async () => (await import('./container/index.js')).containerBackend,
  slurm: async () => (await import('./slurm/index.js')).slurmBackend,
}

/** The backend of a new run: `--backend`, else config `backend`, else local. */
export function backendNamed(name: BackendName | undefined): Promise<SessionBackend> {
  return LOADERS[name ?? 'local']()
}

/** Where a session runs: its sealed record's `backend` (absent in records from before backends: local). */
export function backendOf(record: Pick<SessionRecord, 'backend'>): Promise<SessionBackend> {
  return LOADERS[record.backend ?? 'local']()
}

/** What a reading command may ask of a backend: to look, never to act (SPEC §4, "Reading commands read"). */
export type BackendReader = Pick<
  SessionBackend,
  'name' | 'supports' | 'identity' | 'liveness' | 'logs' | 'wait' | 'uncollected'
>

/** The backend of a session, as a reading command sees it: its acting operations are not there to call. */
export async function readerOf(record: Pick<SessionRecord, 'backend'>): Promise<BackendReader> {
  const backend = await backendOf(record)
  return {
    name: backend.name,
    supports: backend.supports,
    identity: (session) => backend.identity(session),
    liveness: (records, env) => backend.liveness(records, env),
    logs: (session, logsDir) => backend.logs(session, logsDir),
    wait: (session, env, timeoutMs) => backend.wait(session, env, timeoutMs),
    uncollected: (session) => backend.uncollected(session),
  }
}

/** The records of a listing grouped by backend, in the order first seen: one liveness query per backend. */
export function byBackend<T extends Pick<SessionRecord, 'backend'>>(records: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const record of records) {
    const key = record.backend ?? 'local'
    const group = groups.get(key)
    if (group) group.push(record)
    else groups.set(key, [record])
  }
  return groups
}

/** What a command asks of a session's backend, named as the user asked it. */
const ASKED: Record<keyof Omit<BackendSupport, 'whileRunning' | 'interactive'>, string> = {
  tmux: '--tmux',
  noWorktree: '--no-worktree',
  budget: '--budget',
  intervalCheckpoints: 'checkpoint.interval',
}

/**
 * A combination the backend does not support is refused before anything is made (exit 2, naming the backend
 * and what it cannot do: docs/backends.md, "What each backend supports"), never run somewhere else.
 */
export function refuseUnsupported(
  backend: Pick<SessionBackend, 'name' | 'supports'>,
  asked: Partial<Record<keyof typeof ASKED, boolean>>,
): void {
  for (const [key, flag] of Object.entries(ASKED) as [keyof typeof ASKED, string][]) {
    if (asked[key] && !backend.supports[key]) {
      throw new UsageError(
        `the ${backend.name} backend does not support ${flag}`,
        'see docs/backends.md, "What each backend supports"',
        'BACKEND_UNSUPPORTED',
      )
    }
  }
}

/** `checkpoint`, `diff`, `attach` or `send` of a RUNNING session whose backend cannot do it while it runs. */
export function refuseWhileRunning(
  backend: Pick<BackendReader, 'name' | 'supports'>,
  what: keyof BackendSupport['whileRunning'],
): void {
  if (backend.supports.whileRunning[what]) return
  throw new UsageError(
    `the ${backend.name} backend does not support ${what} while the session runs: its agent and worktree are not here`,
    'wait for it to end ("harness session wait <id>"), or stop it',
    'BACKEND_UNSUPPORTED',
  )
}
