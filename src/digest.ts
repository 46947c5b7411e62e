/**
 * SHA-256, SHA-1 and HMAC-SHA256 for seals, the trust list, task hashes, git's index and archives, made by the
 * runtime's own hashing (runtime.ts).
 */
import { type Hasher, newHasher } from './runtime.js'

export type { Hasher }

/** A running hash of `algorithm`. */
export function hashOf(algorithm: 'sha256' | 'sha1'): Hasher {
  return newHasher(algorithm)
}

/** A running HMAC-SHA256 under `key`. */
export function hmacSha256(key: Uint8Array): Hasher {
  return newHasher('sha256', key)
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

/**
 * Whether `a` and `b` (digests in hex: a seal's check) are the same text, in a time that depends on their length
 * only; compared as text, with no buffer made of either.
 */
export function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}
