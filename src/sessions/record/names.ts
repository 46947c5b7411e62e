import { dirname, join } from 'node:path'
import { readText } from '../../disk/door.js'
import { IllegalStateError, UsageError } from '../../errors.js'
import { isValidSessionId, MIN_PREFIX_LENGTH } from './ids.js'

/*
 * Session names (`run --name`, docs/commands.md "harness run"). A name is the record's sealed `name` field;
 * the file `.harness/names/<name>` holding the session's id is its index, so that a name resolves with one
 * read and is taken atomically: the store writes it under the name's lock, after checking that no record
 * holds the name. The index is input like any file: it counts only when the record it names carries that very
 * name.
 */

/** What an id or an id prefix looks like (4–8 lowercase hex characters): never a name. */
const ID_LIKE = /^[0-9a-f]{4,8}$/

/** Could `input` be a name? A name matches the id pattern but never looks like an id. */
export function mayBeName(input: string): boolean {
  return isValidSessionId(input) && !ID_LIKE.test(input)
}

/** Throws a usage error (exit 2) unless `name` may be a session's name. Called before anything is made. */
export function assertValidName(name: string): string {
  const shown = name.length > 64 ? `${name.slice(0, 16)}…` : name
  const hint = 'a name is letters, digits, "_" and "-", up to 64 characters, starting with a letter or digit'
  if (!isValidSessionId(name)) throw new UsageError(`invalid name "${shown}"`, hint, 'INVALID_NAME')
  if (ID_LIKE.test(name)) {
    throw new UsageError(
      `invalid name "${name}": ${MIN_PREFIX_LENGTH} to 8 lowercase hex characters would read as a session id`,
      'use a letter beyond a-f, a capital, "-" or "_", or more characters',
      'INVALID_NAME',
    )
  }
  return name
}

/** `.harness/names`, beside the sessions folder. */
export function namesDirFor(sessionsDir: string): string {
  return join(dirname(sessionsDir), 'names')
}

/** The id the index file of `name` holds, or null (none, unreadable, or not an id). */
export function readNameIndex(namesDir: string, name: string): string | null {
  try {
    const id = readText(join(namesDir, name), 'small').trim()
    return isValidSessionId(id) ? id : null
  } catch {
    return null
  }
}

/** `run --name` of a name another session holds, or that is an id: exit 4, naming that session. */
export function nameTakenError(name: string, owner: string): IllegalStateError {
  return new IllegalStateError(
    owner === name
      ? `the name "${name}" is the id of session ${owner}`
      : `the name "${name}" is taken by session ${owner}`,
    `choose another name; "harness session show ${name}" shows that session`,
    'NAME_TAKEN',
  )
}
