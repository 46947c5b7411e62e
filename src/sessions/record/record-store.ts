import type { SessionRecord } from './schema.js'

/** A record file that does not parse or validate. */
export interface RecordProblem {
  path: string
  reason: string
}

/**
 * The session records, as services use them through the port (sessions/ports.ts); the real one is
 * `SessionStore` (record/store.ts). It lives in `record/` so that the record kernel never imports the port.
 * Its contract,
 * which test/unit/sessions/record/store-contract.test.ts runs against the real store and the fake alike:
 * every create and update bumps `rev` and stamps `updated_at` (and `paused_at` when it pauses); `get` of a
 * missing id is null and `update` of one throws SessionNotFoundError; `create` of a taken id throws
 * SessionExistsError, and of a taken name NAME_TAKEN; an update whose function returns undefined writes nothing.
 */
export interface RecordStore {
  /** The sessions folder (watched by `session wait`; a fake names one that need not exist). */
  readonly dir: string
  /** The environment of the user the store acts for (what a container engine is asked with). */
  readonly env: NodeJS.ProcessEnv
  recordPath(id: string): string
  ensureDir(): void
  /** Ids of every record file, unread. */
  ids(): string[]
  exists(id: string): boolean
  /** The record, or null when there is none; a corrupt one throws CorruptRecordError. */
  get(id: string): SessionRecord | null
  /** Every valid record; corrupt ones are reported through the store's warning and skipped. */
  list(): SessionRecord[]
  /**
   * `list()`, or null (keeping none) once the records read would hold more than `maxBytes` of text: a listing
   * then reads them one at a time (sessions/query/query.ts). `ids`: those `recordIds` just gave.
   */
  listWithin(maxBytes: number, ids?: string[]): SessionRecord[] | null
  /** Bytes of record text read so far through this store (a listing bounds what it reads in total). */
  readonly bytesRead: number
  /** Ids of every record file, after leftovers of killed writers were swept. */
  recordIds(): string[]
  /** One record, validated; null when missing or corrupt (for a `listing`, also when over a listing's size). */
  read(id: string, options?: { listing?: boolean }): SessionRecord | null
  /** A listing that read records one at a time (`read` with `listing`) is over. */
  endListing(): void
  /** The file's fields as they are (parsed, not validated), or null. */
  peek(id: string, options?: { listing?: boolean }): Record<string, unknown> | null
  /** The id of the session named `name` (`run --name`), or null. */
  idOfName(name: string): string | null
  /** A record with a `name` takes it atomically, or throws NAME_TAKEN (exit 4). */
  create(record: SessionRecord): Promise<SessionRecord>
  restore(id: string, text: Buffer): Promise<SessionRecord>
  update(
    id: string,
    mutate: (current: SessionRecord) => SessionRecord | undefined,
    options?: { adopt?: boolean },
  ): Promise<SessionRecord>
  delete(
    id: string,
    prepare?: (current: SessionRecord) => void | Promise<void>,
    known?: SessionRecord,
  ): Promise<void>
  /**
   * A turn at a long step on session `id` beside its record's lock (settling a run whose work is collected:
   * sessions/backends/settle.ts): whoever holds it is the only one doing that step; waits up to `timeoutMs`.
   */
  claim(id: string, step: 'settle', timeoutMs: number): Promise<{ release(): void }>
  corruptRecords(): RecordProblem[]
  quarantine(id: string, corruptDir: string): Promise<{ moved_to: string; report: string } | null>
  /** A warning given at most once per store. */
  warnOnce(key: string, reason: string): void
}
