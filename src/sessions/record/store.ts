import { dirname, join, resolve } from 'node:path'
import {
  ensureDir,
  type FileKind,
  FolderReader,
  JsonTextError,
  LIMITS,
  lstatOrNull,
  openRead,
  parseJson,
  readBytesAt,
  readDirNames,
  readLinkText,
  readText,
  renameFile,
  UnsafeFileError,
  unlinkFile,
  unlinkQuiet,
  writeFileAtomic,
} from '../../disk/door.js'
import {
  asDiskFault,
  fsyncDir,
  realFs,
  replaceFileDurably,
  type WriteFs,
  writeNewFileDurably,
} from '../../durable.js'
import {
  CorruptRecordError,
  HarnessError,
  IllegalStateError,
  SessionExistsError,
  SessionNotFoundError,
} from '../../errors.js'
import { processExists } from '../../process/identity.js'
import { boundRecord, checkedText, promptPathFor, writePromptFile } from './bounds.js'
import { assertValidSessionId } from './ids.js'
import { withPausedAt } from './lifecycle.js'
import { FileLock, type LockOptions, uniqueSuffix, withLock } from './lock.js'
import { assertValidName, mayBeName, namesDirFor, nameTakenError, readNameIndex } from './names.js'
import { type FileIdentity, VerifiedReads } from './read-cache.js'
import type { RecordStore } from './record-store.js'
import { parseSessionRecord, reshapeSessionRecord, SCHEMA_VERSION, type SessionRecord } from './schema.js'
import { inCanonicalOrder, projectScope, type RecordSealer } from './seal.js'

export interface StoreProblem {
  path: string
  reason: string
}

export interface StoreOptions {
  /** Receives corrupt files and repairs; the CLI prints them on stderr. */
  warn?: (problem: StoreProblem) => void
  lock?: LockOptions
  /** Seals written records and verifies read ones: the key of the user harness runs for. */
  sealer: RecordSealer
  /** The file calls of record writes; tests inject short writes and faults. */
  fs?: WriteFs
  /** Told of every committed create and update (after the write), e.g. to run `hooks.on_status`. */
  onChange?: (before: SessionRecord | null, after: SessionRecord) => void
  /** The environment of the user the store acts for: what a container engine is asked with (docs/backends.md). */
  env?: NodeJS.ProcessEnv
  /** Now, in ms: when a listing begins (the read cache names only records that changed well before). */
  now?: () => number
}

/** A record over this is large for a listing (harness's own are far smaller); see `listingLimit`. */
const LISTING_RECORD_BYTES = 256 * 1024
/** What one listing reads of large records, whole, before it reads no more of them. */
const LISTING_LARGE_BYTES = 32 * 1024 * 1024

const RECORD_SUFFIX = '.json'
const LOCK_SUFFIX = '.lock'
const UPDATE_TEMP_SUFFIX = '.tmp'

/**
 * The only module that reads and writes session records (`<sessions>/<id>.json`).
 *
 * Invariants:
 * - a record is replaced only by rename of a fsynced temp file in the same folder, then the folder is fsynced;
 * - every write (create, update, delete) holds the record's lock, so temp files of a record exist only while
 *   its lock is held; one found by a lock holder is a leftover of a killed writer and is swept;
 * - create never takes an existing id, even racing another process: the final name is made with link(2).
 */
export class SessionStore implements RecordStore {
  constructor(
    readonly dir: string,
    private readonly options: StoreOptions,
  ) {}

  /** The caller's environment, for settling a session through its engine ({} when none was given). */
  get env(): NodeJS.ProcessEnv {
    return this.options.env ?? {}
  }

  recordPath(id: string): string {
    return join(this.dir, `${id}${RECORD_SUFFIX}`)
  }

  async claim(id: string, step: 'settle', timeoutMs: number): Promise<{ release(): void }> {
    assertValidSessionId(id)
    this.assertFolderThere(id)
    return FileLock.acquire(join(this.dir, `${id}.${step}.lock`), {
      timeoutMs,
      what: `the ${step} step of session "${id}"`,
    })
  }

  private lockPath(id: string): string {
    return join(this.dir, `${id}${LOCK_SUFFIX}`)
  }

  private lockOptions(id: string): LockOptions {
    return { what: `session "${id}"`, ...this.options.lock }
  }

  /** Ensures the folder exists (0700). Read-only callers never call this. */
  ensureDir(): void {
    try {
      ensureDir(this.dir)
    } catch (error) {
      throw asDiskFault(error, this.dir)
    }
  }

  /** Ids of every `<id>.json` in the folder (no validation of the content). */
  ids(): string[] {
    return this.readDir()
      .filter((name) => name.endsWith(RECORD_SUFFIX))
      .map((name) => name.slice(0, -RECORD_SUFFIX.length))
  }

  exists(id: string): boolean {
    return lstatOrNull(this.recordPath(assertValidSessionId(id)))?.isFile() === true
  }

  /** The record, or null when there is none. Throws CorruptRecordError for a file that cannot be repaired. */
  get(id: string): SessionRecord | null {
    assertValidSessionId(id)
    const read = this.readRecord(id)
    if (read.kind === 'ok') return read.record
    if (this.hasLeftovers(id)) {
      const repaired = this.trySweep(id)
      if (repaired) return repaired
    }
    if (read.kind === 'missing') return null
    throw new CorruptRecordError(this.recordPath(id), read.reason)
  }

  /** Every valid record. Corrupt files are reported through `warn` and skipped, never touched. */
  list(): SessionRecord[] {
    return this.readAll(Number.POSITIVE_INFINITY, false) as SessionRecord[]
  }

  /**
   * `list()` for a listing: null (none kept) once the records read hold more than `maxBytes` of text; large
   * records read within the listing's allowance (`listingLimit`).
   */
  listWithin(maxBytes: number, ids?: string[]): SessionRecord[] | null {
    return this.readAll(maxBytes, true, ids)
  }

  private readAll(maxBytes: number, listing: boolean, ids = this.recordIds()): SessionRecord[] | null {
    // One open of the folder for all the reads (docs/performance.md).
    const reader = FolderReader.open(this.dir)
    if (!reader) return []
    const cache = this.verifiedReads()
    const start = this.bytesRead
    try {
      const records: SessionRecord[] = []
      for (const id of ids) {
        const read = this.readRecord(id, undefined, reader, listing, cache)
        if (this.bytesRead - start > maxBytes) return null
        const record = this.reported(id, read)
        if (record) records.push(record)
      }
      cache?.save(ids)
      return records
    } finally {
      reader.close()
    }
  }

  /** The read cache (read-cache.ts) for a listing beginning now, or null without a key. */
  private verifiedReads(): VerifiedReads | null {
    return VerifiedReads.open(this.sealer.keyFile, this.scope, (this.options.now ?? Date.now)())
  }

  /** The read cache of the listing that reads one record at a time (`read` with `listing`), until `endListing`. */
  private listingReads: VerifiedReads | null | undefined

  private cachedSortKeys(id: string) {
    if (this.listingReads === undefined) this.listingReads = this.verifiedReads()
    const stat = this.listingReads && this.listingReader()?.stat(`${id}${RECORD_SUFFIX}`)
    return stat ? (this.listingReads?.sortKeys(id, stat) ?? null) : null
  }

  /** A listing that read records one at a time is over: the read cache keeps what it learnt. */
  endListing(): void {
    this.listingReads?.save(this.listedIds ?? [])
    this.listingReads = undefined
  }
  private listedIds: string[] | undefined

  /** Bytes of record text read so far by this store (its reads and peeks). */
  bytesRead = 0

  /**
   * Ids of every record file, after leftovers of killed writers were swept where the lock is free (and a
   * missing or corrupt record repaired from one). Nothing is read or validated: big listings read each
   * record later, one at a time (sessions/query/query.ts), so that memory does not grow with the store.
   */
  recordIds(): string[] {
    const leftovers = new Set<string>()
    const ids = new Set<string>()
    for (const name of this.readDir()) {
      if (name.endsWith(RECORD_SUFFIX)) {
        ids.add(name.slice(0, -RECORD_SUFFIX.length))
        continue
      }
      const owner = leftoverOwner(name)
      if (owner) leftovers.add(owner)
    }
    for (const id of leftovers) if (this.trySweep(id)) ids.add(id)
    this.listedIds = [...ids]
    return this.listedIds
  }

  /**
   * One record, validated; null when it is missing or corrupt (reported through `warn`, never touched). For a
   * listing (`listing`), a record over the listing's size is reported too large and left out.
   */
  read(id: string, options: { listing?: boolean } = {}): SessionRecord | null {
    const listing = options.listing === true
    if (listing && this.listingReads === undefined) this.listingReads = this.verifiedReads()
    return this.reported(
      id,
      listing
        ? this.readRecord(id, undefined, this.listingReader(), true, this.listingReads ?? undefined)
        : this.readRecord(id),
    )
  }

  /** The record of a read, or null, a corrupt file reported through `warn`. */
  private reported(id: string, read: ReturnType<SessionStore['readRecord']>): SessionRecord | null {
    if (read.kind === 'ok') return read.record
    if (read.kind === 'corrupt') this.options.warn?.({ path: this.recordPath(id), reason: read.reason })
    return null
  }

  /**
   * The fields a listing sorts and filters by, from the file as it is (parsed, not validated: `read` does
   * that when the record is printed), or null for an unreadable file.
   */
  peek(id: string, options: { listing?: boolean } = {}): Record<string, unknown> | null {
    if (options.listing) {
      // A record the read cache vouches for: its sort keys as verified, from an lstat (not a read) of its file.
      const known = this.cachedSortKeys(id)
      if (known) return { id, ...known }
    }
    try {
      const text = this.readFile(
        id,
        options.listing ? this.listingLimit() : 'record',
        options.listing === true,
      )
      this.bytesRead += text.length
      if (options.listing) this.countLarge(text.length)
      const value: unknown = parseJson(text)
      return value && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : null
    } catch {
      return null
    }
  }

  /**
   * Writes a new record. Throws SessionExistsError if the id is taken (also against a racing process). A record
   * with a `name` takes the name too, as atomically: NAME_TAKEN (exit 4) when another session holds it.
   */
  async create(record: SessionRecord): Promise<SessionRecord> {
    const id = assertValidSessionId(record.id)
    if (typeof record.name === 'string') {
      const name = assertValidName(record.name)
      return this.withName(name, id, true, () => this.createUnnamed(id, record))
    }
    return this.createUnnamed(id, record)
  }

  /** The session named `name`: its index file, counted only when the record it names carries that name. */
  idOfName(name: string): string | null {
    if (!mayBeName(name)) return null
    const id = readNameIndex(namesDirFor(this.dir), name)
    if (id === null) return null
    const read = this.readRecord(id)
    return read.kind === 'ok' && read.record.name === name ? id : null
  }

  /**
   * Runs `make` (which writes session `id`'s record) under the lock of `name`, once no other session holds the
   * name, and indexes the name for `id` first: the index of a failed `make` is removed, and one left by a
   * killed process names a record that is missing or not so named, which does not count. `strict`: a name
   * held is NAME_TAKEN; otherwise (`restore`) the record is made all the same, the name left to its holder.
   */
  private async withName<T>(name: string, id: string, strict: boolean, make: () => Promise<T>): Promise<T> {
    const dir = namesDirFor(this.dir)
    const file = join(dir, name)
    await this.writing(id, async () => ensureDir(dir))
    return withLock(`${file}.lock`, { what: `name "${name}"`, ...this.options.lock }, async () => {
      const owner = this.idOfName(name) ?? (this.exists(name) ? name : null)
      if (owner !== null && owner !== id) {
        if (strict) throw nameTakenError(name, owner)
        return make()
      }
      await this.writing(id, async () => writeFileAtomic(file, `${id}\n`))
      try {
        return await make()
      } catch (error) {
        if (readNameIndex(dir, name) === id) unlinkQuiet(file)
        throw error
      }
    })
  }

  private async createUnnamed(id: string, record: SessionRecord): Promise<SessionRecord> {
    const created = await this.writing(id, async () => {
      this.ensureDir()
      return withLock(this.lockPath(id), this.lockOptions(id), () => {
        this.sweepLocked(id)
        // Under the lock no one else creates it: a taken id is refused before its prompt file is touched.
        if (this.exists(id)) throw new SessionExistsError(id)
        const bounded = boundRecord(stamp(record, 1, null))
        const next = this.sealed(bounded.record, true)
        const text = writableText(next)
        if (bounded.promptText !== null) writePromptFile(this.dir, id, bounded.promptText)
        this.linkNewLocked(id, text)
        return next
      })
    })
    this.options.onChange?.(null, created)
    return created
  }

  /**
   * Writes a record that must not exist yet (lock held): complete and fsynced under a temp name, then linked
   * into place, which fails rather than replace a record another writer made meanwhile.
   */
  private linkNewLocked(id: string, bytes: string | Buffer): void {
    const temp = join(this.dir, `${id}${RECORD_SUFFIX}.${process.pid}-${uniqueSuffix()}.create`)
    writeNewFileDurably(temp, bytes, this.io)
    try {
      this.io.linkSync(temp, this.recordPath(id))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new SessionExistsError(id)
      throw error
    } finally {
      safeUnlink(temp)
    }
    fsyncDir(this.dir)
  }

  /**
   * Puts back a record exactly as it was written (`session unarchive`): the same bytes, so its seal is what
   * it was. The text must be a valid record of this id; the id must be free (SessionExistsError otherwise).
   */
  async restore(id: string, text: Buffer): Promise<SessionRecord> {
    assertValidSessionId(id)
    const parsed = parseRecordText(text.toString('utf8'), id)
    if (parsed.kind !== 'ok') throw new CorruptRecordError(this.recordPath(id), parsed.reason)
    // Its name comes back with it, unless another session holds the name now (it is then reached by its id).
    const name = parsed.record.name
    if (typeof name === 'string' && mayBeName(name)) {
      return this.withName(name, id, false, () => this.restoreUnnamed(id, text, parsed))
    }
    return this.restoreUnnamed(id, text, parsed)
  }

  private async restoreUnnamed(
    id: string,
    text: Buffer,
    parsed: { kind: 'ok'; record: SessionRecord },
  ): Promise<SessionRecord> {
    const restored = await this.writing(id, async () => {
      this.ensureDir()
      return withLock(this.lockPath(id), this.lockOptions(id), () => {
        this.sweepLocked(id)
        this.linkNewLocked(id, text)
        return this.verified(parsed).record
      })
    })
    return restored
  }

  /**
   * Read-modify-write under the record's lock. `mutate` gets the current record (re-read under the lock)
   * and returns the new one, or undefined to leave it as it is. Throws SessionNotFoundError if it is gone.
   */
  async update(
    id: string,
    mutate: (current: SessionRecord) => SessionRecord | undefined,
    options: { adopt?: boolean } = {},
  ): Promise<SessionRecord> {
    assertValidSessionId(id)
    this.assertFolderThere(id)
    let before: SessionRecord | null = null
    const after = await this.writing(id, () =>
      withLock(this.lockPath(id), this.lockOptions(id), async () => {
        const current = this.readForWrite(id)
        const changed =
          mutate(structuredClone(current)) ?? (options.adopt ? structuredClone(current) : undefined)
        if (changed === undefined) return current
        before = current
        const bounded = boundRecord(stamp(changed, (current.rev ?? 0) + 1, current.status))
        // A write never launders a record: only a sealed one (or one the user adopts) is sealed again.
        const next = this.sealed(bounded.record, current.sealed === true || !!options.adopt)
        const text = writableText(next)
        if (bounded.promptText !== null) writePromptFile(this.dir, id, bounded.promptText)
        const temp = join(
          this.dir,
          `${id}${RECORD_SUFFIX}.${process.pid}-${uniqueSuffix()}${UPDATE_TEMP_SUFFIX}`,
        )
        replaceFileDurably(this.recordPath(id), temp, text, this.io)
        return next
      }),
    )
    if (before) this.options.onChange?.(before, after)
    return after
  }

  /**
   * Removes a record (and its leftovers) under its lock. `prepare` runs first, under the same lock, with the
   * current record: it may veto by throwing, or remove what the record owns (worktree, branch, log) so that no
   * other command can resume the session halfway through. The record goes last.
   */
  async delete(
    id: string,
    prepare?: (current: SessionRecord) => void | Promise<void>,
    /**
     * The record as the caller read it from this store: if the file still holds exactly the bytes it was
     * read from, `prepare` gets it as it is, without parsing and verifying those bytes a second time.
     */
    known?: SessionRecord,
  ): Promise<void> {
    assertValidSessionId(id)
    this.assertFolderThere(id)
    await this.writing(id, () =>
      withLock(this.lockPath(id), this.lockOptions(id), async () => {
        // Deletions started together (a batched cleanup) all take their locks and mark before any of them
        // lists the folder, so that one listing serves them all.
        const held = ++this.marks
        await Promise.resolve()
        const current = this.readForWrite(id, this.leftoversListedAfter(held, id), known)
        await prepare?.(current)
        // Asynchronous: deletions made together (a batched cleanup) wait on the file system in parallel.
        await unlinkFile(this.recordPath(id))
        // A long prompt's file goes with its record (after it: a record never names a missing file).
        if (current.prompt_file) await unlinkFile(promptPathFor(this.dir, id))
        // The mark comes after `prepare`: what it wrote must be in the listing this sweep reads. Deletions
        // that reach this point in the same turn of the event loop share one listing taken on the next.
        const swept = ++this.marks
        if (!this.listing || this.listing.after < swept) await this.listedSoon()
        this.sweepLocked(id, this.leftoversListedAfter(swept, id))
        await this.folderSynced()
      }),
    )
  }

  /** Marks made with a lock held (counted); a listing remembers how many had been made before it was taken. */
  private marks = 0
  private listing: { byOwner: Map<string, string[]>; after: number } | null = null

  /**
   * The names of `id`'s leftovers, from a listing of the folder taken after mark number `mark`. The caller
   * has held its record's lock since that mark, and a record's temp files exist only while its lock is
   * held, so none of the caller's can have appeared or gone since (but by the caller's own hand): a listing
   * taken later is as good as a new one. A batch of deletions lists the folder twice, not twice per record
   * (reading a folder of 1,000 records 2,000 times took seconds), and sorts it by owner once.
   */
  private leftoversListedAfter(mark: number, id: string): string[] {
    if (!this.listing || this.listing.after < mark) {
      const byOwner = new Map<string, string[]>()
      for (const name of this.readDir()) {
        const owner = leftoverOwner(name)
        if (owner !== null) byOwner.set(owner, [...(byOwner.get(owner) ?? []), name])
      }
      this.listing = { byOwner, after: this.marks }
    }
    return this.listing.byOwner.get(id) ?? []
  }

  private pendingListing: Promise<void> | null = null

  /** A listing of the folder taken on the next turn of the event loop, shared by everyone waiting for it. */
  private listedSoon(): Promise<void> {
    this.pendingListing ??= new Promise((resolve) => {
      setImmediate(() => {
        this.pendingListing = null
        this.listing = null
        resolve()
      })
    })
    return this.pendingListing
  }

  private pendingSync: Promise<void> | null = null

  /**
   * One fsync of the sessions folder for every deletion made before it starts (a batched cleanup deletes
   * hundreds of records at once): each caller has unlinked its record already, and holds its lock until the
   * shared fsync, started on the next turn of the event loop, has made that unlink durable.
   */
  private folderSynced(): Promise<void> {
    this.pendingSync ??= new Promise((resolve) => {
      setImmediate(() => {
        this.pendingSync = null
        fsyncDir(this.dir)
        resolve()
      })
    })
    return this.pendingSync
  }

  /** Record files that do not parse or validate (after leftovers were swept and used for repair where they can). */
  corruptRecords(): StoreProblem[] {
    const found: StoreProblem[] = []
    for (const id of this.recordIds()) {
      const read = this.readRecord(id)
      if (read.kind === 'corrupt') found.push({ path: this.recordPath(id), reason: read.reason })
    }
    return found
  }

  /**
   * Moves a record that no leftover can repair to `<corruptDir>/<id>.json`, beside `<id>.json.report.txt`
   * (reason, size, mtime, first bytes escaped), under the record's lock: listings stop warning about it, and
   * nothing is deleted. A symlink in the record's place is moved as a link, never followed. Returns null when
   * the record is (or became) valid or missing.
   */
  async quarantine(id: string, corruptDir: string): Promise<{ moved_to: string; report: string } | null> {
    if (!lstatOrNull(this.dir)) return null
    return this.writing(id, () =>
      withLock(this.lockPath(id), this.lockOptions(id), () => {
        if (this.sweepLocked(id)) return null
        const read = this.readRecord(id)
        if (read.kind !== 'corrupt') return null
        assertOwnFolder(corruptDir)
        ensureDir(corruptDir)
        assertOwnFolder(corruptDir)
        const source = this.recordPath(id)
        let name = `${id}${RECORD_SUFFIX}`
        for (
          let i = 1;
          existsNoFollow(join(corruptDir, name)) || existsNoFollow(join(corruptDir, `${name}.report.txt`));
          i++
        ) {
          name = `${id}${RECORD_SUFFIX}.${i}`
        }
        const target = join(corruptDir, name)
        const report = join(corruptDir, `${name}.report.txt`)
        // The report first: a moved record never lacks one.
        writeNewFileDurably(report, corruptReport(source, read.reason), this.io)
        try {
          renameFile(source, target)
        } catch (error) {
          safeUnlink(report)
          throw error
        }
        fsyncDir(corruptDir)
        fsyncDir(this.dir)
        return { moved_to: target, report }
      }),
    )
  }

  private readonly warned = new Set<string>()

  /** A warning given at most once per store (per command). */
  warnOnce(key: string, reason: string): void {
    if (this.warned.has(key)) return
    this.warned.add(key)
    this.options.warn?.({ path: this.dir, reason })
  }

  private get io(): WriteFs {
    return this.options.fs ?? realFs
  }

  /** Runs a write; a full, read-only or failing disk becomes one clear error (the old record is intact). */
  private async writing<T>(id: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn()
    } catch (error) {
      throw asDiskFault(error, this.recordPath(id))
    }
  }

  /**
   * A record's lock is made beside it: with no sessions folder there is no record, and the lock's ENOENT is
   * the same not-found as a missing record in a folder that exists (nothing is made for it).
   */
  private assertFolderThere(id: string): void {
    if (!lstatOrNull(this.dir)) throw new SessionNotFoundError(id)
  }

  private readForWrite(id: string, leftovers?: string[], known?: SessionRecord): SessionRecord {
    const repaired = this.sweepLocked(id, leftovers)
    if (repaired) return repaired
    const read = this.readRecord(id, known)
    if (read.kind === 'ok') return read.record
    if (read.kind === 'missing') throw new SessionNotFoundError(id)
    throw new CorruptRecordError(this.recordPath(id), read.reason)
  }

  /**
   * The text each record returned by a read was parsed from, for as long as the record is kept: a caller
   * that hands the record back (`delete`'s `known`) spares a second parse and seal check of the same bytes.
   */
  private readonly texts = new WeakMap<SessionRecord, string>()

  /**
   * What a listing reads of one record: a whole record (LIMITS.record) while it has read less than
   * LISTING_LARGE_BYTES of records over LISTING_RECORD_BYTES, then only records up to that size. harness's own
   * records are far smaller (a long prompt has its own file, checkpoints and lists are capped: bounds.ts), so a
   * listing reads a few large ones whole, and a shipped folder of a thousand records of a megabyte each costs it
   * what 32 MiB does (docs/security.md, "Limits at write time").
   */
  private listingLimit(): number {
    return this.largeRead < LISTING_LARGE_BYTES ? LIMITS.record : LISTING_RECORD_BYTES
  }
  private largeRead = 0

  private countLarge(bytes: number): void {
    if (bytes > LISTING_RECORD_BYTES) this.largeRead += bytes
  }

  private readRecord(
    id: string,
    known?: SessionRecord,
    reader?: FolderReader,
    listing = false,
    cache?: VerifiedReads | null,
  ): { kind: 'ok'; record: SessionRecord } | { kind: 'missing' } | { kind: 'corrupt'; reason: string } {
    let text: string
    let stat: FileIdentity | undefined
    const kind = listing ? this.listingLimit() : 'record'
    try {
      if (reader) ({ text, stat } = reader.read(`${id}${RECORD_SUFFIX}`, kind))
      else text = readText(this.recordPath(id), kind)
      this.bytesRead += text.length
      if (listing) this.countLarge(text.length)
    } catch (error) {
      if (error instanceof UnsafeFileError && listing && error.code === 'FILE_TOO_BIG') {
        return {
          kind: 'corrupt',
          reason: `too large for this listing (${error.reason}), which read its ${LISTING_LARGE_BYTES} bytes of records over ${LISTING_RECORD_BYTES} bytes: "harness session show ${id}" reads it`,
        }
      }
      if (error instanceof UnsafeFileError) return { kind: 'corrupt', reason: error.reason }
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return { kind: 'missing' }
      return { kind: 'corrupt', reason: `cannot read: ${code ?? String(error)}` }
    }
    if (known && known.id === id && this.texts.get(known) === text) return { kind: 'ok', record: known }
    const read =
      cache && stat ? this.readCached(id, text, stat, cache) : this.verified(parseRecordText(text, id))
    // A listing's records are printed, never handed back: their text need not be kept.
    if (read.kind === 'ok' && !listing) this.texts.set(read.record, text)
    return read
  }

  /**
   * A record read through the read cache (read-cache.ts): when it vouches for the file, parsed and put in the
   * validator's order without a check; else checked, and named in it when sealed and unchanged by the validator.
   */
  private readCached(id: string, text: string, stat: FileIdentity, cache: VerifiedReads) {
    if (cache.vouches(id, stat)) {
      const record = reshapeSessionRecord(parseJson(text))
      record.sealed = this.sealer.vouched(record)
      delete record.seal_problem
      return { kind: 'ok' as const, record }
    }
    const read = this.verified(parseRecordText(text, id))
    if (read.kind === 'ok' && read.record.sealed && read.parsed !== undefined)
      cache.verified(id, stat, read.record)
    return read
  }

  /** The text of record `id`: through the listing's held folder when `listing`, else by its path. */
  private readFile(id: string, kind: FileKind | number, listing: boolean): string {
    const reader = listing ? this.listingReader() : undefined
    return reader ? reader.readText(`${id}${RECORD_SUFFIX}`, kind) : readText(this.recordPath(id), kind)
  }

  /**
   * The sessions folder held open for the reads of a listing too big to hold in memory (two passes over
   * every record: docs/performance.md): its parents checked once, not at every read. Closed once the
   * listing lets the event loop turn; a later read opens it again.
   */
  private listingReader(): FolderReader | undefined {
    if (this.heldForListing === undefined) {
      this.heldForListing = FolderReader.open(this.dir)
      setImmediate(() => {
        this.heldForListing?.close()
        this.heldForListing = undefined
      })
    }
    return this.heldForListing ?? undefined
  }
  private heldForListing: FolderReader | null | undefined

  private get sealer(): RecordSealer {
    return this.options.sealer
  }

  /** The real path of the project these records belong to (`<project>/.harness/sessions`): what seals cover. */
  private get scope(): string {
    this.scopeValue ??= projectScope(dirname(dirname(resolve(this.dir))))
    return this.scopeValue
  }
  private scopeValue: string | undefined

  /**
   * Marks a parsed record `sealed` (computed on every read, never trusted from the file), with `seal_problem`
   * saying why not when it is foreign (another key, another project, changed).
   */
  private verified<T extends ReturnType<typeof parseRecordText>>(read: T): T {
    if (read.kind !== 'ok') return read
    const problem = this.sealer.check(read.record, this.scope, read.parsed)
    read.record.sealed = problem === null
    if (problem) read.record.seal_problem = problem
    else delete read.record.seal_problem
    return read
  }

  /**
   * The record as it will be written: sealed with the user's key for this project (its real path and the
   * key's id are part of what is sealed), or without any seal.
   */
  private sealed(record: SessionRecord, seal: boolean): SessionRecord {
    const { seal: _old, sealed: _computed, seal_problem: _problem, ...content } = record
    if (!seal) return { ...content, sealed: false, ...(_problem ? { seal_problem: _problem } : {}) }
    const scoped = { ...content, project: this.scope, seal_key: this.sealer.keyId() }
    return { ...scoped, seal: this.sealer.seal(scoped, this.scope), sealed: true }
  }

  private hasLeftovers(id: string): boolean {
    return this.readDir().some((name) => leftoverOwner(name) === id)
  }

  /** Sweeps leftovers if the lock is free right now; returns the record if that repaired it. */
  private trySweep(id: string): SessionRecord | null {
    let lock: FileLock | null = null
    try {
      lock = FileLock.tryAcquire(this.lockPath(id), this.lockOptions(id))
    } catch {
      return null // read-only folder or similar: reading goes on without repair
    }
    if (!lock) return null
    try {
      return this.sweepLocked(id)
    } finally {
      lock.release()
    }
  }

  /**
   * With the lock held: removes temp files left by killed writers. If the record is missing or corrupt and a
   * leftover holds a valid record of this id, the newest such leftover replaces it (returned).
   */
  private sweepLocked(
    id: string,
    temps = this.readDir().filter((name) => leftoverOwner(name) === id),
  ): SessionRecord | null {
    if (temps.length === 0) return null
    const current = this.readRecord(id)
    let repaired: SessionRecord | null = null
    if (current.kind !== 'ok') {
      const candidates = temps
        .filter((name) => isUpdateTemp(name, id))
        .map((name) => ({ name, mtime: mtimeOf(join(this.dir, name)) }))
        .sort((a, b) => b.mtime - a.mtime)
      for (const { name } of candidates) {
        const path = join(this.dir, name)
        let parsed: ReturnType<typeof parseRecordText>
        try {
          parsed = this.verified(parseRecordText(readText(path, 'record'), id))
        } catch {
          continue
        }
        if (parsed.kind !== 'ok') continue
        renameFile(path, this.recordPath(id))
        this.options.warn?.({
          path: this.recordPath(id),
          reason: `${current.kind === 'missing' ? 'missing' : 'corrupt'} record repaired from ${name}`,
        })
        repaired = parsed.record
        break
      }
    }
    for (const name of temps) safeUnlink(join(this.dir, name))
    fsyncDir(this.dir)
    return repaired
  }

  private readDir(): string[] {
    return readDirNames(this.dir)
  }
}

function parseRecordText(
  text: string,
  id: string,
): { kind: 'ok'; record: SessionRecord; parsed?: unknown } | { kind: 'corrupt'; reason: string } {
  let value: unknown
  try {
    value = parseJson(text)
  } catch (error) {
    // The door's reason says where, never what: the file may be a credential a link led to.
    if (error instanceof JsonTextError) return { kind: 'corrupt', reason: error.reason }
    throw error
  }
  const parsed = parseSessionRecord(value)
  if (!parsed.ok) return { kind: 'corrupt', reason: parsed.reason }
  if (parsed.record.id !== id) {
    return { kind: 'corrupt', reason: `its id "${parsed.record.id}" does not match the file name` }
  }
  // What it was parsed from, when that holds the same content: the seal check may read its text as it is.
  return parsed.asIs
    ? { kind: 'ok', record: parsed.record, parsed: value }
    : { kind: 'ok', record: parsed.record }
}

/**
 * Temp files: `<id>.json.<pid>-<hex>.tmp` (update), `<id>.json.<hash>` (updates by versions that used
 * write-file-atomic), `<id>.json.tmp` (other tools' plain temp name), `<id>.json.<pid>-<hex>.create` (create),
 * `<id>.lock.<pid>.<hex>.tmp` (the lock), `<id>.lock.<dead holder pid>.<…>.break` (a lock breaker's guard).
 * Returns the id a leftover belongs to. A lock temp exists for a moment *before* its lock is held, so it is a
 * leftover only if its pid is dead.
 */
function leftoverOwner(name: string): string | null {
  const json = name.indexOf(`${RECORD_SUFFIX}.`)
  if (json > 0) return name.slice(0, json)
  const lock = name.indexOf(`${LOCK_SUFFIX}.`)
  if (lock > 0) {
    const pid = Number(name.slice(lock + LOCK_SUFFIX.length + 1).split('.')[0])
    return Number.isInteger(pid) && pid > 0 && !processExists(pid) ? name.slice(0, lock) : null
  }
  return null
}

/**
 * A leftover of an update (a whole new record) can repair a record; a create's leftover never existed. The
 * plain `<id>.json.tmp`, the temp name other tools (and people) write a record under, counts as one.
 */
function isUpdateTemp(name: string, id: string): boolean {
  const prefix = `${id}${RECORD_SUFFIX}.`
  if (!name.startsWith(prefix)) return false
  const rest = name.slice(prefix.length)
  return (
    rest === 'tmp' ||
    /^[0-9a-f]+$/.test(rest) ||
    (rest.endsWith(UPDATE_TEMP_SUFFIX) && /^\d+-[0-9a-z]+\.tmp$/.test(rest))
  )
}

/** What every write stamps: the schema version, `rev`, `updated_at`, and `paused_at` when it pauses. */
function stamp(record: SessionRecord, rev: number, before: SessionRecord['status'] | null): SessionRecord {
  const at = new Date().toISOString()
  return withPausedAt(
    before,
    { ...record, schema_version: record.schema_version ?? SCHEMA_VERSION, rev, updated_at: at },
    at,
  )
}

/** The file's text: keys in canonical order, so that reading it back needs no sorted copy for the seal check. */
function serialize(record: SessionRecord): string {
  const { sealed: _computed, seal_problem: _problem, ...stored } = record
  return `${JSON.stringify(inCanonicalOrder(stored), null, 2)}\n`
}

/**
 * The text of a record about to be written: valid by the schema that reads it (a count below 0, a status
 * unknown, would make it corrupt on the next read) and small enough to be read back (RecordTooBigError);
 * otherwise nothing is written (docs/security.md, "Limits at write time").
 */
function writableText(record: SessionRecord): string {
  const parsed = parseSessionRecord(record)
  if (!parsed.ok) {
    throw new HarnessError(
      'RECORD_INVALID',
      `the record of session "${record.id}" would not be valid (${parsed.reason}): it was not written`,
    )
  }
  return checkedText(record.id, serialize(record))
}

function mtimeOf(path: string): number {
  return lstatOrNull(path)?.mtimeMs ?? 0
}

function safeUnlink(path: string): void {
  unlinkQuiet(path)
}

/** harness's own folder, never a symlink or a file (docs/security.md). */
function assertOwnFolder(dir: string): void {
  const stat = lstatOrNull(dir)
  if (!stat) return
  if (!stat.isDirectory() || stat.isSymbolicLink()) {
    throw new IllegalStateError(
      `${dir} is ${stat.isSymbolicLink() ? 'a symlink' : 'not a folder'}: harness never follows links in its own folders`,
      'replace it with a real folder (its target is left alone)',
      'SYMLINK_REFUSED',
    )
  }
}

function existsNoFollow(path: string): boolean {
  return lstatOrNull(path) !== null
}

const REPORT_BYTES = 256

/** What the report beside a quarantined record says: why, how big, when, and its first bytes, escaped. */
function corruptReport(path: string, reason: string): string {
  const stat = lstatOrNull(path)
  if (!stat) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })
  const lines = [
    'harness: this session record could not be read and no temporary file could repair it;',
    '"harness session recover --all" moved it here. Nothing was deleted.',
    '',
    `file: ${escapeBytes(Buffer.from(path))}`,
    `reason: ${escapeBytes(Buffer.from(reason))}`,
    `size: ${stat.size} bytes`,
    `mtime: ${stat.mtime.toISOString()}`,
    `moved_at: ${new Date().toISOString()}`,
  ]
  if (stat.isSymbolicLink()) {
    lines.push(`a symbolic link to ${escapeBytes(Buffer.from(readLinkText(path)))} (not followed)`)
  } else if (!stat.isFile()) {
    lines.push('not a plain file (not opened)')
  } else {
    const { fd } = openRead(path)
    const head = readBytesAt(fd, REPORT_BYTES, 0, true)
    lines.push(`first ${head.length} bytes: ${escapeBytes(head)}`)
  }
  return `${lines.join('\n')}\n`
}

/** Printable ASCII as it is (a backslash doubled), every other byte as \xNN: safe in any terminal. */
function escapeBytes(bytes: Buffer): string {
  let out = ''
  for (const byte of bytes) {
    if (byte === 0x5c) out += '\\\\'
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte)
    else out += `\\x${byte.toString(16).padStart(2, '0')}`
  }
  return out
}
