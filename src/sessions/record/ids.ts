import { InvalidSessionIdError } from '../../errors.js'

/** A user-chosen id; `harness/<id>` is then always a valid branch name and `<id>.json` a plain file name. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
export const MIN_PREFIX_LENGTH = 4

/** 8 lowercase hex characters. nanoid (and node:crypto) load only when an id is made. */
export async function generateSessionId(): Promise<string> {
  const { customAlphabet } = await import('nanoid')
  return customAlphabet('0123456789abcdef', 8)()
}

/** Throws a usage error unless `id` is a well-formed id. Called before any file is touched. */
export function assertValidSessionId(id: string): string {
  if (id.length === 0) throw new InvalidSessionIdError(id, 'it is empty')
  if (id.length > 64)
    throw new InvalidSessionIdError(`${id.slice(0, 16)}…`, `it is ${id.length} characters long (at most 64)`)
  if (!SESSION_ID_PATTERN.test(id)) {
    throw new InvalidSessionIdError(
      id,
      'only letters, digits, "_" and "-" are allowed, starting with a letter or digit',
    )
  }
  return id
}

export function isValidSessionId(id: string): boolean {
  return SESSION_ID_PATTERN.test(id)
}

export type IdResolution =
  | { kind: 'exact'; id: string }
  | { kind: 'unique'; id: string }
  | { kind: 'none' }
  | { kind: 'ambiguous'; candidates: string[] }

/**
 * Exact id, else a unique prefix of at least MIN_PREFIX_LENGTH characters (like git).
 * Pure: the caller supplies the known ids.
 */
export function resolveIdAmong(input: string, known: Iterable<string>): IdResolution {
  const candidates: string[] = []
  for (const id of known) {
    if (id === input) return { kind: 'exact', id }
    if (input.length >= MIN_PREFIX_LENGTH && id.startsWith(input)) candidates.push(id)
  }
  if (candidates.length === 0) return { kind: 'none' }
  if (candidates.length === 1) return { kind: 'unique', id: candidates[0] as string }
  return { kind: 'ambiguous', candidates: candidates.sort() }
}
