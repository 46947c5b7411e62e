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
const VERSION = 1
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
  private readonly now = new Map<string, string>()
  private added = 0

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
    const identity = identityOf(stat)
    if (this.before[id] !== identity) return false
    this.now.set(id, identity)
    return true
  }

  /** Record `id` verified, sealed and unchanged by the validator: named if it changed long enough ago. */
  verified(id: string, stat: FileIdentity): void {
    if (stat.ctimeMs > this.since - SETTLED_MS || stat.ctimeMs <= 0) return
    this.now.set(id, identityOf(stat))
    this.added++
  }

  /** Written back when it learnt something or names records that are gone (`ids`: those there now). */
  save(ids: readonly string[]): void {
    const there = new Set(ids)
    const records: Record<string, string> = {}
    let dropped = false
    for (const id in this.before) {
      if (there.has(id)) records[id] = this.before[id] as string
      else dropped = true
    }
    if (this.added === 0 && !dropped) return
    for (const [id, identity] of this.now) if (there.has(id)) records[id] = identity
    try {
      ensureDir(dirname(this.file))
      writeFileAtomic(this.file, JSON.stringify({ ...this.header, records }))
    } catch {
      // A read-only state folder: the next listing checks every record again.
    }
  }
}

function isTextMap(value: unknown): value is Record<string, string> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
