import { dirname, join } from 'node:path'
import { ensureDir, lstatOrNull, parseJson, readText, writeFileAtomic } from '../../disk/door.js'
import { recordShapeText } from './schema.js'

/*
 * What a listing learnt of the records it verified (docs/development/design.md, "The record store"): a record
 * file whose seal verified and which the validator read unchanged is named here with its file's identity (device,
 * inode, size, modification and change times). A later listing that finds the same identity reads the file
 * without checking seal and schema again. The file is `$XDG_STATE_HOME/harness/verified/<project>.json`, beside
 * the key, where someone who can write the project folder cannot; the change time is set by the kernel on every
 * write, rename and link, and no user can set it back. Only files whose change time is SETTLED_MS before the
 * listing began are named: a write in the same clock tick as the one verified would keep its times.
 */

/** How long before a listing a record must have last changed to be named (coarse clocks, 2 s file systems). */
const SETTLED_MS = 5_000
const VERSION = 2
/** 100,000 records take about 7 MB. */
const MAX_BYTES = 64 * 1024 * 1024

/** The identity of a file's content as `fstat` gives it. */
export interface FileIdentity {
  dev: number
  ino: number
  size: number
  mtimeMs: number
  ctimeMs: number
}

function identityOf(stat: FileIdentity): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
}

/** FNV-1a over a text, twice (64 bits in hex): a file name for a project, not a secret. */
function nameOf(text: string): string {
  let a = 0x811c9dc5
  let b = 0x050c5d1f
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193)
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0')
}

interface CacheFile {
  version: number
  scope: string
  key: string
  shape: string
  records: Record<string, string>
}

/** The verdicts of one project's records under the user's key, for one listing. */
export class VerifiedReads {
  /** What this listing verified anew. */
  private readonly now = new Map<string, string>()

  private constructor(
    private readonly file: string,
    private readonly header: Omit<CacheFile, 'records'>,
    private readonly before: Record<string, string>,
    private readonly since: number,
  ) {}

  /**
   * The cache of project `scope` under the key in `keyFile` (none without a key: nothing is sealed then), for
   * a listing that begins at `since` (ms).
   */
  static open(keyFile: string, scope: string, since: number): VerifiedReads | null {
    const key = lstatOrNull(keyFile)
    if (!key?.isFile()) return null
    const header = { version: VERSION, scope, key: identityOf(key), shape: nameOf(recordShapeText()) }
    const file = join(dirname(keyFile), 'verified', `${nameOf(scope)}.json`)
    let records: Record<string, string> = {}
    try {
      const value = parseJson(readText(file, MAX_BYTES)) as Partial<CacheFile> | null
      const same = value?.version === VERSION && value.scope === scope && value.key === header.key
      if (same && value.shape === header.shape && isTextMap(value.records)) records = value.records
    } catch {
      // None yet, or not readable: every record is checked.
    }
    return new VerifiedReads(file, header, records, since)
  }

  /** Whether record `id`'s file, as `stat` says it is now, was verified before. */
  vouches(id: string, stat: FileIdentity): boolean {
    return this.entry(id, stat) !== null
  }

  /**
   * What a listing sorts and filters by (status, created_at, updated_at) of record `id` as verified before,
   * when its file, as `stat` (an lstat) says it is now, is the one verified; else null.
   */
  sortKeys(
    id: string,
    stat: FileIdentity,
  ): { status: string; created_at: string; updated_at?: string } | null {
    const entry = this.entry(id, stat)
    if (entry === null) return null
    const [, status = '', created_at = '', updated_at] = entry.split(' ')
    return updated_at ? { status, created_at, updated_at } : { status, created_at }
  }

  /** The entry of record `id` (its identity, then its sort keys) if `stat` is that identity. */
  private entry(id: string, stat: FileIdentity): string | null {
    const identity = identityOf(stat)
    const entry = this.before[id]
    if (typeof entry !== 'string' || !entry.startsWith(`${identity} `)) return null
    return entry
  }

  /** Record `id` verified, sealed and unchanged by the validator: named if it changed long enough ago. */
  verified(
    id: string,
    stat: FileIdentity,
    record: { status: string; created_at: string; updated_at?: string | null },
  ): void {
    if (stat.ctimeMs > this.since - SETTLED_MS || stat.ctimeMs <= 0) return
    const keys = [record.status, record.created_at, record.updated_at ?? '']
    // A key with a space in it (no timestamp has one) would not be read back as it was.
    if (keys.some((key) => key.includes(' '))) return
    // Joined into a string of its own, which holds no part of the record's text alive.
    this.now.set(id, [identityOf(stat), ...keys].join(' '))
  }

  /** Written back when it learnt something or names records that are gone (`ids`: those there now). */
  save(ids: readonly string[]): void {
    const there = new Set(ids)
    let dropped = false
    for (const id in this.before) {
      if (!there.has(id)) {
        dropped = true
        break
      }
    }
    if (this.now.size === 0 && !dropped) return
    // Written piece by piece: a listing of 100,000 records holds no second object of them all.
    const pieces: string[] = []
    const put = (id: string, entry: string) => pieces.push(`${JSON.stringify(id)}:${JSON.stringify(entry)}`)
    for (const id in this.before) {
      if (there.has(id) && !this.now.has(id)) put(id, this.before[id] as string)
    }
    for (const [id, entry] of this.now) if (there.has(id)) put(id, entry)
    try {
      ensureDir(dirname(this.file))
      const header = JSON.stringify(this.header).slice(0, -1)
      writeFileAtomic(this.file, `${header},"records":{${pieces.join(',')}}}`)
    } catch {
      // A read-only state folder: the next listing checks every record again.
    }
  }
}

function isTextMap(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
