import type { HarnessConfig } from '../../../config.js'
import { IllegalStateError, UsageError } from '../../../errors.js'
import { checkoutOf } from '../../../git/container-git.js'
import { logPathFor } from '../../../project.js'
import type { ContainerFacts, SessionRecord } from '../../record/schema.js'
import type { ActEnv, BackendState, PreparedRun, ReadEnv, RunRequest, SessionBackend } from '../backend.js'
import { FULL_SUPPORT } from '../backend.js'
import { hostFor, processIdentity, processState } from '../local/index.js'
import { collectContainer, createContainer, settleContainer, stopContainer } from './backend.js'
import { containerDoctor } from './doctor.js'
import {
  type EngineName,
  EngineTimeoutError,
  findEngine,
  inspectMany,
  removeContainer,
  verifiedContainer,
  waitContainer,
} from './engine.js'

/** `--image`, `--engine` and config `container.*`, for a container run. */
export interface ContainerChoice {
  image?: string
  engine?: EngineName
  network?: string
  env?: string[]
}

/**
 * A container run's choices: flags, then the record's own (a resume runs where its session ran, in the same
 * image with the same variables and network), then config.
 */
function containerChoice(
  flags: RunRequest['flags'],
  config: HarnessConfig,
  previous?: SessionRecord,
): ContainerChoice {
  const before = previous?.container ?? undefined
  return {
    image: flags.image ?? before?.image ?? config.container?.image,
    engine: flags.engine ?? (before?.engine as EngineName | undefined) ?? config.container?.engine,
    network: before?.network ?? config.container?.network,
    env: before?.env ?? config.container?.env,
  }
}

function imageMissing(): UsageError {
  return new UsageError(
    'a container session needs an image that contains the agent CLI',
    'pass --image IMAGE, or set it: harness config set container.image IMAGE --user',
    'IMAGE_MISSING',
  )
}

/** The session's facts a collection needs, from its sealed record. */
function sessionOf(record: SessionRecord, harnessDir: string) {
  return {
    id: record.id,
    harnessDir,
    repoDir: record.is_worktree ? (record.base_dir ?? null) : null,
    worktreeDir: record.worktree_dir,
    branch: record.is_worktree ? (record.git_branch ?? null) : null,
  }
}

/** Creates the run's container (docs/backends.md); what the supervisor runs, and how the record names it. */
async function prepareContainer(run: RunRequest): Promise<PreparedRun> {
  const choice = containerChoice(run.flags, run.config, run.kind === 'resume' ? run.session : undefined)
  const image = choice.image
  if (!image) throw imageMissing()
  // --no-worktree in a repository: its .git is mounted read-only (mounts.ts).
  const checkout = run.repo ? null : await checkoutOf(run.worktreeDir, run.env)
  const created = await createContainer({
    id: run.id,
    runN: run.runN,
    engine: choice.engine,
    image,
    network: choice.network ?? 'none',
    envNames: choice.env ?? [],
    worktreeDir: run.worktreeDir,
    cwd: run.cwd,
    harnessDir: run.harnessDir,
    agentDir: run.agentDir,
    repo: run.repo,
    checkout,
    command: run.command,
    args: run.args,
    interactive: run.mode === 'interactive',
    env: run.env,
  })
  return {
    record: { backend: 'container', container: created.facts },
    command: { command: created.command, args: created.args },
    undo: created.undo,
  }
}

/** The run's own supervisor lives (what the process table says, not an orphaned agent or client). */
function supervised(state: BackendState | undefined): boolean {
  return state?.kind === 'alive' && state.liveness === 'running'
}

/**
 * Liveness of many container sessions: their supervisors from one look at the process table; for those whose
 * supervisor is gone, one `inspect` of all their containers per engine (docs/backends.md, "The engine
 * supervises"). Only a sealed record's container is looked at, only as the identity the record holds.
 */
async function containerLiveness(records: readonly SessionRecord[], env: ReadEnv): Promise<BackendState[]> {
  const states = records.map((record) => processState(record, env.check))
  const asked = records
    .map((record, i) => ({ record, i, facts: record.container }))
    // A live supervisor speaks for its container; without one (a SIGKILLed client leaves the engine's client
    // attached, orphaned), the engine does.
    .filter(({ record, i, facts }) => !supervised(states[i]) && facts && record.sealed === true)
  const engines = new Map<string, typeof asked>()
  for (const entry of asked) {
    const name = String(entry.facts?.engine)
    engines.set(name, [...(engines.get(name) ?? []), entry])
  }
  for (const [name, entries] of engines) {
    let found: Awaited<ReturnType<typeof inspectMany>>
    try {
      const engine = await findEngine(name as EngineName, env.env)
      found = await inspectMany(
        engine,
        entries.map((entry) => entry.facts?.id ?? ''),
        env.env,
      )
    } catch (error) {
      // An engine that is missing or does not answer: what the records say stands, unverified (never a hang).
      if (error instanceof EngineTimeoutError) {
        env.warnOnce(
          'engine',
          `${error.message}: container sessions are shown as their records say (unverified)`,
        )
      }
      for (const { i } of entries) states[i] = { kind: 'unverified' }
      continue
    }
    for (const { i, facts } of entries) {
      const state = facts ? found.get(facts.id) : undefined
      if (!state) continue // no such container: the record's own reconciliation applies
      if (state.created !== facts?.created) states[i] = { kind: 'unverified' }
      else if (state.running) states[i] = { kind: 'alive', liveness: 'running' }
      else states[i] = { kind: 'ended', exit: { exitCode: state.exitCode, signal: null, stopped: false } }
    }
  }
  return states
}

/**
 * A resume whose last run's commits did not come back (a collection that failed, or never happened: a settled
 * run without `collected`) collects them now; when it still cannot, the resume is refused (exit 4) and the
 * private clone that holds them is kept.
 */
async function collectFirst(record: SessionRecord, env: ActEnv): Promise<void> {
  const previous = record.container
  const done = ['none', 'fast-forward', 'diverged']
  if (!previous?.git_dir || !previous.start_tip || done.includes(previous.collected?.kind ?? '')) return
  const session = sessionOf(record, env.harnessDir)
  if (!session.repoDir || !session.branch) return
  const outcome = await collectContainer(previous, session, env.env)
  if (outcome.kind !== 'failed') {
    await env.store.update(record.id, (current) =>
      current.container?.id === previous.id
        ? { ...current, container: { ...current.container, collected: outcome } }
        : undefined,
    )
    return
  }
  throw new IllegalStateError(
    `the commits of session "${record.id}"'s last run are not back on its branch yet: ${outcome.reason}`,
    `they are kept in ${previous.git_dir}; once that is fixed, "harness session resume ${record.id}" brings them back first`,
    'UNCOLLECTED_WORK',
  )
}

async function waitForContainer(facts: ContainerFacts, env: ReadEnv, timeoutMs: number): Promise<boolean> {
  const engine = await findEngine(facts.engine as EngineName, env.env)
  try {
    const state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env.env)
    if (typeof state !== 'object') return false
  } catch (error) {
    // An engine that does not answer: the caller follows the record instead (never a hang here).
    if (error instanceof EngineTimeoutError) return false
    throw error
  }
  // The user holds a wait: no deadline of harness's but the wait's own --timeout.
  await waitContainer(engine, facts.id, env.env, Number.isFinite(timeoutMs) ? timeoutMs : undefined).catch(
    (error: unknown) => {
      if (!(error instanceof EngineTimeoutError)) throw error
    },
  )
  return true
}

/** podman or docker (docs/backends.md): a local supervisor attached to the container while it lives. */
export const containerBackend: SessionBackend = {
  name: 'container',
  supports: FULL_SUPPORT,
  async check(run) {
    const choice = containerChoice(run.flags, run.config, run.session)
    if (!choice.image) throw imageMissing()
    await findEngine(choice.engine, run.env)
  },
  prepare: prepareContainer,
  start(run, prepared, io) {
    return io.supervise(prepared.command ?? { command: run.command, args: run.args }, hostFor(run))
  },
  identity(record) {
    const c = record.container
    if (!c) return processIdentity(record)
    return `${c.engine} container ${c.id.slice(0, 12)} created ${c.created}`
  },
  liveness: containerLiveness,
  logs(record, logsDir) {
    return { files: [logPathFor(logsDir, record.id)], pollMs: 100 }
  },
  async stop(record, graceMs, env) {
    if (!record.container || record.sealed !== true) return { kind: 'unverified' }
    const outcome = await stopContainer(record.container, graceMs, env.env)
    if (outcome === 'unverified') return { kind: 'unverified' }
    const stopped = outcome === 'stopped'
    return {
      kind: stopped ? 'stopped' : 'gone',
      exit: { exitCode: null, signal: stopped ? 'SIGTERM' : null, stopped },
    }
  },
  async wait(record, env, timeoutMs) {
    const facts = record.container
    return facts && record.sealed === true ? waitForContainer(facts, env, timeoutMs) : false
  },
  async collect(record, env, options = {}) {
    const facts = record.container
    if (!facts) return (current) => current
    const collected = await settleContainer(facts, sessionOf(record, env.harnessDir), env.env, {
      ...options,
      signal: env.signal,
    }).catch((error: unknown) => ({
      kind: 'failed' as const,
      reason: error instanceof Error ? error.message : String(error),
    }))
    return (current) =>
      current.container && current.container.id === facts.id
        ? { ...current, container: { ...current.container, collected } }
        : current
  },
  uncollected(record) {
    const collected = record.container?.collected
    return collected?.kind === 'failed'
      ? `the commits of its last run are not on its branch yet (${String(collected.reason ?? 'collection failed')})`
      : null
  },
  resume: collectFirst,
  async destroy(record, env) {
    const facts = record.container
    if (!facts || record.sealed !== true) return
    const engine = await findEngine(facts.engine as EngineName, env.env).catch(() => null)
    if (!engine) return
    const state = await verifiedContainer(engine, { id: facts.id, created: facts.created }, env.env)
    if (typeof state === 'object') await removeContainer(engine, facts.id, env.env)
  },
  async doctor(request) {
    return containerDoctor(request)
  },
}
