/**
 * SHA-256, SHA-1 and HMAC-SHA256 for seals, the trust list, task hashes, git's index and archives. Inside the
 * native executable they are bun's own (`Bun.CryptoHasher`): loading node:crypto costs it about 3.5 ms at start,
 * more than a whole `session show` otherwise spends on its record, and its HMAC 4× as much per record
 * (docs/development/native.md, "Start-up"). Under node, node:crypto is loaded on first use.
 */

export interface Hasher {
  update(data: string | Uint8Array): Hasher
  digest(): Buffer
  digest(encoding: 'hex'): string
}

type Algorithm = 'sha256' | 'sha1'

const BunHasher = (
  globalThis as { Bun?: { CryptoHasher: new (algorithm: Algorithm, key?: Uint8Array) => Hasher } }
).Bun?.CryptoHasher

function nodeCrypto() {
  return process.getBuiltinModule('node:crypto')
}

/** A running hash of `algorithm`. */
export function hashOf(algorithm: Algorithm): Hasher {
  return BunHasher ? new BunHasher(algorithm) : nodeCrypto().createHash(algorithm)
}

/** A running HMAC-SHA256 under `key`. */
export function hmacSha256(key: Uint8Array): Hasher {
  return BunHasher ? new BunHasher('sha256', key) : nodeCrypto().createHmac('sha256', key)
}

/** The hex SHA-256 of `data`. */
export function sha256Hex(data: string | Uint8Array): string {
  return hashOf('sha256').update(data).digest('hex')
}

/** `n` bytes from the system's secure random source. */
export function randomBytes(n: number): Buffer {
  const bytes = Buffer.alloc(n)
  globalThis.crypto.getRandomValues(bytes)
  return bytes
}

/** Whether `a` and `b` are the same bytes, in a time that depends on their length only (a seal's check). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number)
  return difference === 0
}
