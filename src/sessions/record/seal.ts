import { join, resolve } from 'node:path'
import { hashOf, hmacSha256, randomBytes, sameHex } from '../../digest.js'
import { ensureDir, linkFile, readBytes, realPath, unlinkQuiet } from '../../disk/door.js'
import { asDiskFault, writeNewFileDurably } from '../../durable.js'
import { type ErrorCode, ExitCode, HarnessError, IllegalStateError } from '../../errors.js'
import { userStateDir } from '../../project.js'
import type { SessionRecord } from './schema.js'

const KEY_BYTES = 32

export function sealKeyFile(env: NodeJS.ProcessEnv): string {
  return join(userStateDir(env), 'key')
}

const NOTHING: ReadonlySet<string> = new Set()

/**
 * JSON with object keys sorted at every level and no whitespace: one text for one value, whatever its key
 * order; the top-level keys in `omit` are left out. The text must stay byte for byte what it
 * always was (every seal depends on it): a copy with sorted keys, printed by JSON.stringify, gives that text
 * (a string, number or key is printed as JSON.stringify prints it; undefined in an object is left out, in an
 * array it is null), and lets the runtime build the text natively: about a third of the time of building it
 * piece by piece, under node and more so under bun. test/unit/sessions/record/seal.test.ts compares the two.
 */
export function canonicalJson(value: unknown, omit: ReadonlySet<string> = NOTHING): string {
  const copy = sortedCopy(value, omit)
  return copy === INDEX_KEYS ? canonicalPiecewise(value, omit) : (JSON.stringify(copy) ?? 'null')
}

/**
 * `value` with its keys in canonical order at every level, as the store writes records: a record read back
 * from such a file has its canonical text printed as it is (`canonicalAsIs`), without a sorted copy. Index-like
 * keys cannot be put in that order (see INDEX_KEYS): then `value` as it is.
 */
export function inCanonicalOrder<T>(value: T): T {
  const copy = sortedCopy(value)
  return copy === INDEX_KEYS ? value : (copy as T)
}

/**
 * The canonical text of `parsed` (as JSON.parse made it), the top-level keys in `omit` left out, when its keys
 * already come in canonical order at every level (as the store writes records): JSON.stringify prints that
 * text as it is, and a listing spares a sorted copy of every record. Null when they do not, or when `parsed`
 * holds anything JSON.parse does not make.
 */
export function canonicalAsIs(parsed: unknown, omit: ReadonlySet<string>): string | null {
  if (!inOrder(parsed)) return null
  const object = parsed as Record<string, unknown>
  const left: Array<[string, unknown]> = []
  for (const key of omit) {
    if (key in object) {
      left.push([key, object[key]])
      object[key] = undefined // left out by JSON.stringify; put back below
    }
  }
  try {
    return JSON.stringify(object)
  } finally {
    for (const [key, value] of left) object[key] = value
  }
}

/** Whether every object in `value` is plain and lists its keys in sorted order (no `__proto__` among them). */
function inOrder(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) {
    return value === null || typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value)
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!inOrder(value[i])) return false
    return true
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false
  let previous: string | undefined
  for (const key in value) {
    if ((previous !== undefined && key <= previous) || key === '__proto__') return false
    previous = key
    if (!inOrder((value as Record<string, unknown>)[key])) return false
  }
  return true
}

/**
 * An object has a key like "2" or "10": JavaScript objects list such keys first and in numeric order whatever
 * the order they were set in, so a copy cannot carry the sorted order; the piecewise builder takes over.
 */
const INDEX_KEYS: unique symbol = Symbol('index keys')

/** The same text built piece by piece: for objects with keys JSON.stringify would not print in the order given. */
function canonicalPiecewise(value: unknown, omit: ReadonlySet<string>): string {
  // The text must stay byte for byte what JSON.stringify gives (every seal depends on it); the cases below
  // only skip its work where the answer is known: a string with nothing to escape, a finite number.
  switch (typeof value) {
    case 'string':
      return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object':
      break
    default:
      return JSON.stringify(value) ?? 'null'
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ','
      const item: unknown = value[i]
      out += item === undefined ? 'null' : canonicalPiecewise(item, NOTHING)
    }
    return `${out}]`
  }
  let out = '{'
  for (const key of sortedKeys(Object.keys(value))) {
    if (omit.has(key)) continue
    const item = (value as Record<string, unknown>)[key]
    if (item === undefined) continue
    if (out.length > 1) out += ','
    out += `${JSON.stringify(key)}:${canonicalPiecewise(item, NOTHING)}`
  }
  return `${out}}`
}

/** `value` with every object's keys in sorted order; what JSON could not hold is null, as canonical JSON has it. */
function sortedCopy(value: unknown, omit: ReadonlySet<string> = NOTHING): unknown {
  if (typeof value !== 'object') {
    // A function or symbol is null here (JSON.stringify would drop its key); bigint throws in both.
    return typeof value === 'function' || typeof value === 'symbol' ? null : value
  }
  if (value === null) return null
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length)
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      const copied = item === undefined ? null : sortedCopy(item)
      if (copied === INDEX_KEYS) return INDEX_KEYS
      out[i] = copied
    }
    return out
  }
  const out: Record<string, unknown> = {}
  for (const key of sortedKeys(Object.keys(value))) {
    if (omit.has(key)) continue
    const item = (value as Record<string, unknown>)[key]
    if (item === undefined) continue
    const first = key.charCodeAt(0)
    if (first >= 48 && first <= 57) return INDEX_KEYS // a digit: maybe an index key (see INDEX_KEYS)
    const copied = sortedCopy(item)
    if (copied === INDEX_KEYS) return INDEX_KEYS
    // Assigning __proto__ would set the copy's prototype instead of making a key.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copied, enumerable: true })
    else out[key] = copied
  }
  return out
}

/**
 * Object.keys(...).sort(), remembered per sequence of keys: records share a few shapes (the record, a run, a
 * checkpoint, metadata), so a listing sorts each shape once instead of every object's keys (the sort was a
 * fifth of the canonical text's cost). The cache is a trie on the keys in their given order, so a hit is
 * exact; it is bounded, and past the bound the keys are sorted as before.
 */
function sortedKeys(keys: string[]): readonly string[] {
  let node = KEY_ORDERS
  for (const key of keys) {
    let next = node.next.get(key)
    if (!next) {
      if (keyOrderNodes >= MAX_KEY_ORDER_NODES) return keys.sort()
      keyOrderNodes++
      next = { next: new Map(), sorted: undefined }
      node.next.set(key, next)
    }
    node = next
  }
  node.sorted ??= [...keys].sort()
  return node.sorted
}

interface KeyOrderNode {
  next: Map<string, KeyOrderNode>
  sorted: readonly string[] | undefined
}
const KEY_ORDERS: KeyOrderNode = { next: new Map(), sorted: undefined }
/** Enough for every shape of record harness writes; a record with keys of its own adds a few. */
const MAX_KEY_ORDER_NODES = 10_000
let keyOrderNodes = 0

/** What JSON.stringify may escape in a string: control characters, `"`, `\\`, and surrogates (the lone ones). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON.stringify escapes
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/

/**
 * The seal of `record` under `key` (hex): the HMAC of what a seal covers, the record without the seal and the
 * fields computed on every read, then a newline and the real path of the project it belongs to (a record
 * copied into another project does not verify there). Without a scope (a chain's own store, older tests) the
 * record alone. The parts are hashed one after the other: the same bytes, without making them one string.
 */
function sealOf(key: Buffer, record: Record<string, unknown>, scope?: string): string {
  return hmacHex(key, canonicalJson(record, NOT_SEALED), scope)
}

function hmacHex(key: Buffer, text: string, scope: string | undefined): string {
  const hmac = hmacSha256(key).update(text)
  if (scope !== undefined) hmac.update('\n').update(scope)
  return hmac.digest('hex')
}

/** The fields a seal does not cover: the seal itself and what is computed on every read. */
const NOT_SEALED: ReadonlySet<string> = new Set(['seal', 'sealed', 'seal_problem'])

/** The real path of a project folder, the scope its records are sealed for (its spelling if it is gone). */
export function projectScope(root: string): string {
  try {
    return realPath(root)
  } catch {
    return resolve(root)
  }
}

/** Why a record's seal is not the user's, in words a user can act on (shown by show/list and in refusals). */
export type SealProblem = 'unsealed' | 'no-key' | 'other-key' | 'other-project' | 'unscoped' | 'changed'

export const SEAL_PROBLEM_TEXT: Record<SealProblem, string> = {
  unsealed: 'it carries no seal (written by hand, or by a version without seals)',
  'no-key': 'this user has no sealing key yet, so nothing here was sealed by harness for this user',
  'other-key': 'sealed by another key: another HOME or user?',
  'other-project':
    "sealed for another project folder (copied or moved here?): seals cover the project's real path",
  unscoped: "sealed by an older harness, whose seals did not cover the project's path",
  changed: 'its content changed after harness sealed it',
}

declare const verifiedBrand: unique symbol

/**
 * A record whose seal verified under the user's key for this project (docs/security.md, "Verified
 * records"). Only `verifiedSession` makes one, and only for a record the store verified when it read it; every
 * function that acts on what a record names (its worktree, branch, refs, processes, tmux server, log, agent
 * files) takes one, so the compiler refuses a call with a record that was not verified.
 */
export type VerifiedSession<T extends { id: string } = { id: string }> = T & {
  readonly [verifiedBrand]: true
}

/** Seals that verified (or that this process made) under the user's key: what `verifiedSession` accepts. */
const verifiedSeals = new Set<string>()

/** A record that failed verification, refused for what it would take: exit 4, FOREIGN. */
export class ForeignSessionError extends IllegalStateError {
  constructor(
    id: string,
    what: string,
    problem: SealProblem | string | undefined,
    code: ErrorCode = 'FOREIGN',
  ) {
    const known = typeof problem === 'string' && problem in SEAL_PROBLEM_TEXT
    super(
      `session "${id}" is foreign (${SEAL_PROBLEM_TEXT[known ? (problem as SealProblem) : 'unsealed']}): harness shows it but never ${what}`,
      `check what it names with "harness session show ${id}", then "harness session adopt ${id}" if it is yours`,
      code,
    )
  }
}

/**
 * `record` as a verified session if the store verified its seal when it read it (or sealed it itself), else
 * null. A `sealed: true` set by anyone else, or a seal that was never checked, gives null.
 */
export function verifiedOrNull<T extends { id: string; seal?: unknown; sealed?: unknown }>(
  record: T,
): VerifiedSession<T> | null {
  if (record.sealed !== true || typeof record.seal !== 'string') return null
  return verifiedSeals.has(record.seal) ? (record as VerifiedSession<T>) : null
}

/** `record` as a verified session, or ForeignSessionError naming what it would have taken (`what`). */
export function verifiedSession<
  T extends { id: string; seal?: unknown; sealed?: unknown; seal_problem?: unknown },
>(record: T, what: string): VerifiedSession<T> {
  const verified = verifiedOrNull(record)
  if (verified) return verified
  throw new ForeignSessionError(record.id, what, sealProblemOf(record))
}

function sealProblemOf(record: { seal_problem?: unknown }): SealProblem | undefined {
  const problem = record.seal_problem
  return typeof problem === 'string' && problem in SEAL_PROBLEM_TEXT ? (problem as SealProblem) : undefined
}

/**
 * Seals records with the user's key (docs/security.md): HMAC-SHA256 over the record without `seal`, in
 * canonical JSON. A record whose seal is missing or wrong is foreign: harness shows it but never acts on it.
 */
export class RecordSealer {
  private key: Buffer | null | undefined

  constructor(readonly keyFile: string) {}

  static forEnv(env: NodeJS.ProcessEnv): RecordSealer {
    return new RecordSealer(sealKeyFile(env))
  }

  /** The seal of `record` under the user's key (made on first use, 0600), for the project `scope`. */
  seal(record: Record<string, unknown>, scope?: string): string {
    const seal = sealOf(this.loadKey(true) as Buffer, record, scope)
    verifiedSeals.add(seal)
    return seal
  }

  /** A short public name of the user's key (made on first use), stored in records as `seal_key`. */
  keyId(): string {
    return keyIdOf(this.loadKey(true) as Buffer)
  }

  /** Whether the record's seal is the user's; without a key nothing was ever sealed here. */
  verify(record: Record<string, unknown>, scope?: string): boolean {
    return this.check(record, scope) === null
  }

  /**
   * Null when the record's seal is the user's for `scope`; else why not. `parsed`: what the record was
   * validated from, when it holds the same content (parseSessionRecord's `asIs`): its text is the record's.
   */
  check(record: Record<string, unknown>, scope?: string, parsed?: unknown): SealProblem | null {
    const seal = record.seal
    if (typeof seal !== 'string' || !/^[0-9a-f]{64}$/.test(seal)) return 'unsealed'
    const key = this.loadKey(false)
    if (!key) return 'no-key'
    if (typeof record.seal_key === 'string' && record.seal_key !== this.loadedKeyId(key)) return 'other-key'
    const text =
      (parsed === undefined ? null : canonicalAsIs(parsed, NOT_SEALED)) ?? canonicalJson(record, NOT_SEALED)
    if (sameHex(hmacHex(key, text, scope), seal)) {
      verifiedSeals.add(seal)
      return null
    }
    if (scope === undefined) return 'changed'
    if (typeof record.project === 'string' && record.project !== scope) return 'other-project'
    return sameHex(hmacHex(key, text, undefined), seal) ? 'unscoped' : 'changed'
  }

  /**
   * True: `record` was read from a file the read cache (read-cache.ts) vouches for, unchanged since its seal
   * verified under this key for this project. Only the store's read through that cache calls this.
   */
  vouched(record: Record<string, unknown>): true {
    verifiedSeals.add(record.seal as string)
    return true
  }

  /** The id of the loaded key, worked out once (a listing asks for every record). */
  private loadedKeyId(key: Buffer): string {
    if (this.keyIdFor?.key !== key) this.keyIdFor = { key, id: keyIdOf(key) }
    return this.keyIdFor.id
  }
  private keyIdFor: { key: Buffer; id: string } | undefined

  private loadKey(create: boolean): Buffer | null {
    if (this.key) return this.key
    if (this.key === null && !create) return null
    this.key = readKey(this.keyFile)
    if (!this.key && create) this.key = makeKey(this.keyFile)
    return this.key
  }
}

function keyIdOf(key: Buffer): string {
  return hashOf('sha256').update('harness seal key id\0').update(key).digest('hex').slice(0, 16)
}

function readKey(file: string): Buffer | null {
  try {
    const key = readBytes(file, 'small')
    return key.length === KEY_BYTES ? key : null
  } catch {
    return null
  }
}

/** 32 random bytes, made visible whole (temp file + link): two first uses racing end up with one key. */
function makeKey(file: string): Buffer {
  const dir = join(file, '..')
  const temp = `${file}.${process.pid}.${Date.now().toString(36)}.tmp`
  try {
    ensureDir(dir)
    writeNewFileDurably(temp, randomBytes(KEY_BYTES))
    try {
      linkFile(temp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  } catch (error) {
    throw asDiskFault(error, file)
  } finally {
    unlinkQuiet(temp)
  }
  const key = readKey(file)
  if (!key) {
    throw new HarnessError(
      'BAD_KEY',
      `${file} is not a ${KEY_BYTES}-byte key`,
      ExitCode.Failure,
      'move it aside: harness makes a new one (records sealed with the old one become foreign)',
    )
  }
  return key
}

/** Provider, permission, arguments and worktree come only from a record harness sealed (docs/security.md). */
export function assertSealed<T extends SessionRecord>(record: T): VerifiedSession<T> {
  return verifiedSession(record, 'acts on what it names')
}
