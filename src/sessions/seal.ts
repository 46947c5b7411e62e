import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { asDiskFault, writeNewFileDurably } from '../durable.js'
import { ExitCode, HarnessError, IllegalStateError } from '../errors.js'
import { userStateDir } from '../project.js'
import type { SessionRecord } from './schema.js'

const KEY_BYTES = 32

export function sealKeyFile(env: NodeJS.ProcessEnv): string {
  return join(userStateDir(env), 'key')
}

/** JSON with object keys sorted at every level and no whitespace: one text for one value, whatever its key order. */
export function canonicalJson(value: unknown): string {
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
      out += item === undefined ? 'null' : canonicalJson(item)
    }
    return `${out}]`
  }
  let out = '{'
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key]
    if (item === undefined) continue
    if (out.length > 1) out += ','
    out += `${canonicalJson(key)}:${canonicalJson(item)}`
  }
  return `${out}}`
}

/** What JSON.stringify may escape in a string: control characters, `"`, `\\`, and surrogates (the lone ones). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON.stringify escapes
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/

/** The fields a seal does not cover: the seal itself, and `sealed`, which is computed on every read. */
function sealedContent(record: Record<string, unknown>): string {
  const { seal: _seal, sealed: _sealed, ...rest } = record
  return canonicalJson(rest)
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

  /** The seal of `record` under the user's key (made on first use, 0600). */
  seal(record: Record<string, unknown>): string {
    return hmac(this.loadKey(true) as Buffer, sealedContent(record))
  }

  /** Whether the record's seal is the user's; without a key nothing was ever sealed here. */
  verify(record: Record<string, unknown>): boolean {
    const seal = record.seal
    if (typeof seal !== 'string' || !/^[0-9a-f]{64}$/.test(seal)) return false
    const key = this.loadKey(false)
    if (!key) return false
    return timingSafeEqual(Buffer.from(hmac(key, sealedContent(record)), 'hex'), Buffer.from(seal, 'hex'))
  }

  private loadKey(create: boolean): Buffer | null {
    if (this.key) return this.key
    if (this.key === null && !create) return null
    this.key = readKey(this.keyFile)
    if (!this.key && create) this.key = makeKey(this.keyFile)
    return this.key
  }
}

function hmac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex')
}

function readKey(file: string): Buffer | null {
  try {
    const key = readFileSync(file)
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
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    writeNewFileDurably(temp, randomBytes(KEY_BYTES))
    try {
      linkSync(temp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  } catch (error) {
    throw asDiskFault(error, file)
  } finally {
    try {
      unlinkSync(temp)
    } catch {}
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
export function assertSealed(record: SessionRecord): void {
  if (record.sealed === true) return
  throw new IllegalStateError(
    `session "${record.id}" is foreign (not sealed by harness for this user): it is shown but never acted on`,
    `check what it names with "harness session show ${record.id}", then "harness session adopt ${record.id}"`,
    'FOREIGN',
  )
}
