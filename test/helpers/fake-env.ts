import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { HarnessConfig } from '../../src/config.js'
import {
  CorruptRecordError,
  IllegalTransitionError,
  SessionExistsError,
  SessionNotFoundError,
} from '../../src/errors.js'
import type { IdentityCheck } from '../../src/process/identity.js'
import type { RootIdentity, StopOutcome } from '../../src/process/stop.js'
import type { ProjectPaths } from '../../src/project.js'
import type {
  Clock,
  Processes,
  RecordedIdentity,
  RecordProblem,
  RecordStore,
  SessionEnv,
} from '../../src/sessions/ports.js'
import { assertValidSessionId } from '../../src/sessions/record/ids.js'
import { nextStatus, SESSION_EVENTS, withPausedAt } from '../../src/sessions/record/lifecycle.js'
import { assertValidName, mayBeName, nameTakenError } from '../../src/sessions/record/names.js'
import { SCHEMA_VERSION, type SessionRecord } from '../../src/sessions/record/schema.js'
import { RecordSealer } from '../../src/sessions/record/seal.js'
import { tmpDir } from './tmp.js'

/**
 * Fakes of the session services' port (src/sessions/ports.ts): a test builds a `SessionEnv` in a line and calls
 * a service directly, without a process, a terminal or a project on disk. The store honours the contract the
 * real one does (test/unit/sessions/record/store-contract.test.ts runs the same cases against both).
 */

/** Where fake processes run: a record naming another host is unverifiable, as with the real table. */
export const FAKE_HOST = 'fake-host'

/**
 * Records in memory. A status change by `update` is checked against the real lifecycle: a service under test
 * cannot make an illegal one (the real store trusts its callers there; create takes any status, as it does).
 */
export class MemoryStore implements RecordStore {
  private readonly records = new Map<string, SessionRecord>()
  private readonly corrupt = new Map<string, string>()
  private readonly warned = new Set<string>()
  /** What the store reported (corrupt records, warnOnce), as the CLI would print them. */
  readonly problems: RecordProblem[] = []
  /** Every committed write, in order: the record after it. */
  readonly writes: SessionRecord[] = []

  constructor(
    readonly dir = '/fake/project/.harness/sessions',
    readonly env: NodeJS.ProcessEnv = {},
    private readonly clock: Clock = { now: () => Date.now() },
  ) {}

  recordPath(id: string): string {
    return join(this.dir, `${id}.json`)
  }

  private readonly claims = new Map<string, Promise<void>>()

  /** One holder at a time per session and step, as the real store's lock file gives. */
  async claim(id: string, step: 'settle'): Promise<{ release(): void }> {
    const key = `${id}.${step}`
    for (let held = this.claims.get(key); held; held = this.claims.get(key)) await held
    let release = () => {}
    this.claims.set(
      key,
      new Promise<void>((resolve) => {
        release = () => {
          this.claims.delete(key)
          resolve()
        }
      }),
    )
    return { release }
  }

  ensureDir(): void {}

  ids(): string[] {
    return [...this.records.keys(), ...this.corrupt.keys()]
  }

  exists(id: string): boolean {
    assertValidSessionId(id)
    return this.records.has(id) || this.corrupt.has(id)
  }

  get(id: string): SessionRecord | null {
    assertValidSessionId(id)
    const reason = this.corrupt.get(id)
    if (reason !== undefined) throw new CorruptRecordError(this.recordPath(id), reason)
    const record = this.records.get(id)
    return record ? structuredClone(record) : null
  }

  listWithin(_maxBytes: number, _ids?: string[]): SessionRecord[] | null {
    return this.list()
  }

  readonly bytesRead = 0

  list(): SessionRecord[] {
    return this.recordIds().flatMap((id) => this.read(id) ?? [])
  }

  recordIds(): string[] {
    return this.ids()
  }

  read(id: string): SessionRecord | null {
    const reason = this.corrupt.get(id)
    if (reason !== undefined) this.problems.push({ path: this.recordPath(id), reason })
    const record = this.records.get(id)
    return record ? structuredClone(record) : null
  }

  endListing(): void {}

  peek(id: string): Record<string, unknown> | null {
    const record = this.records.get(id)
    return record ? { ...record } : null
  }

  idOfName(name: string): string | null {
    if (!mayBeName(name)) return null
    return [...this.records.values()].find((record) => record.name === name)?.id ?? null
  }

  async create(record: SessionRecord): Promise<SessionRecord> {
    const id = assertValidSessionId(record.id)
    if (this.exists(id)) throw new SessionExistsError(id)
    if (typeof record.name === 'string') {
      const name = assertValidName(record.name)
      const owner = this.idOfName(name) ?? (this.exists(name) ? name : null)
      if (owner !== null) throw nameTakenError(name, owner)
    }
    return this.commit(id, { ...record, schema_version: record.schema_version ?? SCHEMA_VERSION }, 1, null)
  }

  async restore(id: string, text: Buffer): Promise<SessionRecord> {
    if (this.exists(id)) throw new SessionExistsError(id)
    const record = JSON.parse(text.toString('utf8')) as SessionRecord
    this.records.set(id, sealed({ ...record, sealed: true }))
    return structuredClone(record)
  }

  async update(
    id: string,
    mutate: (current: SessionRecord) => SessionRecord | undefined,
    options: { adopt?: boolean } = {},
  ): Promise<SessionRecord> {
    const current = this.get(id)
    if (!current) throw new SessionNotFoundError(id)
    const changed = mutate(structuredClone(current)) ?? (options.adopt ? current : undefined)
    if (changed === undefined) return current
    if (changed.status !== current.status) assertLegal(current.status, changed.status, id)
    return this.commit(id, changed, (current.rev ?? 0) + 1, current.status)
  }

  async delete(
    id: string,
    prepare?: (current: SessionRecord) => void | Promise<void>,
    known?: SessionRecord,
  ): Promise<void> {
    const current = known ?? this.get(id)
    if (!current) throw new SessionNotFoundError(id)
    await prepare?.(current)
    this.records.delete(id)
  }

  corruptRecords(): RecordProblem[] {
    return [...this.corrupt].map(([id, reason]) => ({ path: this.recordPath(id), reason }))
  }

  async quarantine(id: string, corruptDir: string): Promise<{ moved_to: string; report: string } | null> {
    if (!this.corrupt.delete(id)) return null
    const movedTo = join(corruptDir, `${id}.json`)
    return { moved_to: movedTo, report: `${movedTo}.report.txt` }
  }

  warnOnce(key: string, reason: string): void {
    if (this.warned.has(key)) return
    this.warned.add(key)
    this.problems.push({ path: this.dir, reason })
  }

  /** Puts a record in place as it is (no stamp, no lifecycle check), as a file found on disk would be. */
  put(record: SessionRecord): this {
    this.records.set(record.id, sealed({ sealed: true, ...structuredClone(record) }))
    return this
  }

  /** A record file that does not parse: `get` throws, listings skip it and report it. */
  putCorrupt(id: string, reason = 'not JSON'): this {
    this.corrupt.set(id, reason)
    return this
  }

  private commit(
    id: string,
    record: SessionRecord,
    rev: number,
    before: SessionRecord['status'] | null,
  ): SessionRecord {
    const at = new Date(this.clock.now()).toISOString()
    const next: SessionRecord = sealed(
      withPausedAt(before, { ...record, rev, updated_at: at, sealed: true }, at),
    )
    this.records.set(id, structuredClone(next))
    this.writes.push(structuredClone(next))
    return next
  }
}

let sealer: RecordSealer | undefined

/**
 * A record marked `sealed` gets a real seal under a key of the test process's own (in a temp folder, never the
 * user's): services take only verified records (sessions/record/seal.ts), as the real store hands them out.
 */
function sealed(record: SessionRecord): SessionRecord {
  if (record.sealed !== true) return record
  sealer ??= new RecordSealer(join(tmpDir('harness-fake-key-'), 'key'))
  const { seal: _old, ...rest } = record
  return { ...rest, seal: sealer.seal(rest) } as SessionRecord
}

/** A status change is legal when some event of the real lifecycle makes it. */
function assertLegal(from: SessionRecord['status'] | null, to: SessionRecord['status'], id: string): void {
  if (SESSION_EVENTS.some((event) => nextStatus(from, event) === to)) return
  throw new IllegalTransitionError(from ?? 'new', `make ${to}`, id)
}

/** A clock that stands still until told, or moves `stepMs` on every reading. */
export class FakeClock implements Clock {
  constructor(
    public ms = Date.parse('2026-10-01T12:00:00.000Z'),
    public stepMs = 0,
  ) {}

  now(): number {
    const now = this.ms
    this.ms += this.stepMs
    return now
  }

  advance(ms: number): void {
    this.ms += ms
  }
}

/** A process of the fake table: alive until signalled (or told), then dead. */
interface FakeProcess {
  start_time: string
  alive: boolean
  /** What it does on a signal; by default SIGTERM and SIGKILL end it. */
  onSignal?: (signal: NodeJS.Signals) => void
}

/** A process table in memory. Every signal and tree stop is recorded, in order. */
export class FakeProcesses implements Processes {
  readonly table = new Map<number, FakeProcess>()
  readonly signals: { pid: number; signal: NodeJS.Signals }[] = []
  readonly treeStops: { pid: number; graceMs: number }[] = []

  constructor(readonly selfPid = 1000) {}

  /** A live process `pid` that started at `startTime`. */
  alive(pid: number, startTime: string, onSignal?: FakeProcess['onSignal']): this {
    this.table.set(pid, { start_time: startTime, alive: true, ...(onSignal ? { onSignal } : {}) })
    return this
  }

  exit(pid: number): void {
    const process = this.table.get(pid)
    if (process) process.alive = false
  }

  check(recorded: RecordedIdentity): IdentityCheck {
    if (!recorded.pid || recorded.hostname !== FAKE_HOST) return 'unverifiable'
    const process = this.table.get(recorded.pid)
    // As checkIdentity: a pid of this host that holds no process is dead, start time or not.
    if (!process?.alive) return 'dead'
    if (!recorded.start_time) return 'unverifiable'
    return process.start_time === recorded.start_time ? 'alive' : 'dead'
  }

  signal(pid: number, signal: NodeJS.Signals): boolean {
    const process = this.table.get(pid)
    if (!process?.alive) return false
    this.signals.push({ pid, signal })
    if (process.onSignal) process.onSignal(signal)
    else if (signal === 'SIGTERM' || signal === 'SIGKILL') process.alive = false
    return true
  }

  async stopTree(root: RootIdentity, options: { graceMs: number }): Promise<StopOutcome> {
    this.treeStops.push({ pid: root.pid, graceMs: options.graceMs })
    const found = this.check({ ...root, hostname: root.hostname ?? null }) === 'alive'
    if (found) this.signal(root.pid, 'SIGTERM')
    return {
      rootFound: found,
      rootState: found ? 'alive' : 'dead',
      signalled: found ? 1 : 0,
      rootSignalled: found,
      killed: 0,
      survivors: [],
      elapsedMs: 0,
    }
  }
}

export interface FakeEnv {
  env: SessionEnv
  store: MemoryStore
  clock: FakeClock
  processes: FakeProcesses
  notices: string[]
  warnings: string[]
}

/**
 * A `SessionEnv` from fakes: `fakeEnv({ records: [...] })`. The project lives at `root` (nothing there needs to
 * exist: a service that measures folders finds them empty).
 */
export function fakeEnv(
  options: {
    records?: SessionRecord[]
    config?: HarnessConfig
    chains?: { name: string; steps: readonly unknown[] }[]
    root?: string
    /** The environment services see (HOME or XDG_STATE_HOME for a service that seals with the user's key). */
    env?: NodeJS.ProcessEnv
    clock?: FakeClock
    processes?: FakeProcesses
  } = {},
): FakeEnv {
  const root = options.root ?? '/fake/project'
  const harnessDir = join(root, '.harness')
  const paths: ProjectPaths = {
    root,
    harnessDir,
    sessionsDir: join(harnessDir, 'sessions'),
    logsDir: join(harnessDir, 'logs'),
    configFile: join(harnessDir, 'config.json'),
    exists: true,
  }
  const clock = options.clock ?? new FakeClock()
  const processes = options.processes ?? new FakeProcesses()
  const store = new MemoryStore(paths.sessionsDir, options.env ?? {}, clock)
  for (const record of options.records ?? []) store.put(record)
  const notices: string[] = []
  const warnings: string[] = []
  const env: SessionEnv = {
    cwd: root,
    env: options.env ?? {},
    interactive: false,
    stdinIsTerminal: false,
    agentOutput: new PassThrough(),
    project: async () => paths,
    store: async () => store,
    storeOf: async (other) =>
      other.harnessDir === harnessDir ? store : new MemoryStore(other.sessionsDir, options.env ?? {}, clock),
    chains: async () => ({ list: () => structuredClone(options.chains ?? []) }),
    config: async () => structuredClone(options.config ?? {}),
    clock,
    processes,
    notice: (message) => notices.push(message),
    warn: (message) => warnings.push(message),
  }
  return { env, store, clock, processes, notices, warnings }
}

/** Where a fake process ran: the fake host (a record without these facts is unverifiable). */
export const FAKE_PLACE = { hostname: FAKE_HOST, boot_id: 'fake-boot', pid_namespace: 'fake-ns' } as const

/** A RUNNING record whose run names `supervisor` and `agent` (pid and start time) on the fake host. */
export function runningRecord(
  id: string,
  processes: { supervisor?: [number, string] | null; agent?: [number, string] | null },
  extra: Partial<SessionRecord> = {},
): SessionRecord {
  const started = '2026-10-01T11:00:00.000Z'
  return {
    id,
    provider: 'claude',
    permission: 'supervised',
    status: 'RUNNING',
    worktree_dir: `/fake/project/.harness/worktrees/${id}`,
    is_worktree: false,
    git_branch: null,
    base_dir: '/fake/project',
    prompt: `task of ${id}`,
    created_at: started,
    sealed: true,
    rev: 1,
    runs: [
      {
        n: 1,
        kind: 'start',
        ...(processes.agent ? { pid: processes.agent[0], pid_start_time: processes.agent[1] } : {}),
        ...(processes.supervisor
          ? { supervisor_pid: processes.supervisor[0], supervisor_start_time: processes.supervisor[1] }
          : {}),
        ...FAKE_PLACE,
        started_at: started,
        ended_at: null,
      },
    ],
    ...extra,
  } as SessionRecord
}

/** A finished record (default COMPLETED, exit 0). */
export function finishedRecord(id: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return runningRecord(
    id,
    {},
    {
      status: 'COMPLETED',
      exit_code: 0,
      completed_at: '2026-10-01T11:30:00.000Z',
      runs: [
        {
          n: 1,
          kind: 'start',
          started_at: '2026-10-01T11:00:00.000Z',
          ended_at: '2026-10-01T11:30:00.000Z',
          exit_code: 0,
          signal: null,
        },
      ] as SessionRecord['runs'],
      ...extra,
    },
  )
}
