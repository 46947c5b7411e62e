/**
 * The small entry's `session path` (cli/fast-entry.ts loads it for that line alone): what the full CLI prints for
 * a settled record found without doubt, following the same steps, or null (nothing printed) for everything else.
 */
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path'
import { parseJson, pathExists, readDirNames, readText, statOrNull } from '../disk/door.js'
import { assertOwnFolders, HARNESS_DIR_NAME, pathsFor, walkUp } from '../project.js'
import { isValidSessionId, resolveIdAmong } from '../sessions/record/ids.js'
import { mayBeName, namesDirFor, readNameIndex } from '../sessions/record/names.js'
import { parseSessionRecord, type SessionRecord } from '../sessions/record/schema.js'
import { projectScope, RecordSealer, sealKeyFile } from '../sessions/record/seal.js'

/** Statuses whose record `session path` prints as it is: a RUNNING one is reconciled first (sessions/query/query.ts). */
const SETTLED = new Set(['PAUSED', 'COMPLETED', 'FAILED', 'KILLED'])

/**
 * What `session path` (sessions/query/query.ts) prints for a settled record found without doubt, following the
 * same steps: the project as cli/context.ts finds it, the id as resolveSessionId resolves it, the record as
 * the store reads it (valid, named by its id), and its folder present.
 */
export function sessionPath(
  input: string,
  dir: string | undefined,
  around: { cwd: string; env: NodeJS.ProcessEnv },
): { id: string; path: string } | null {
  const harnessDir = findHarnessDir(dir, around)
  if (!harnessDir) return null
  const paths = pathsFor(harnessDir)
  assertOwnFolders(paths)
  if (!isValidSessionId(input)) return null
  const file = (id: string) => join(paths.sessionsDir, `${id}.json`)
  const found = { harnessDir, env: around.env }
  let id = input
  if (!statOrNull(file(input))?.isFile()) {
    // A name comes before a prefix (resolveSessionId): its index, when the record it names carries that name.
    const named = mayBeName(input) ? readNameIndex(namesDirFor(paths.sessionsDir), input) : null
    if (named !== null && statOrNull(file(named))?.isFile()) {
      const read = validRecord(parseJson(readText(file(named), 'record')))
      if (!read) return null
      if (read.record.name === input) return settledPath(named, read, found)
    }
    const names = readDirNames(paths.sessionsDir)
    const resolution = resolveIdAmong(
      input,
      names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)),
    )
    if (resolution.kind !== 'exact' && resolution.kind !== 'unique') return null
    id = resolution.id
    if (!isValidSessionId(id)) return null
  }
  // Through the door: a FIFO, device or link in the record's place is refused, never read or waited on.
  const read = validRecord(parseJson(readText(file(id), 'record')))
  return read && settledPath(id, read, found)
}

interface Read {
  record: SessionRecord
  /** What it was parsed from, when that holds the same content (the store checks its seal the same way). */
  parsed?: unknown
}

/** The record as the store reads it (the same validator), or null for one the store would report. */
function validRecord(value: unknown): Read | null {
  const parsed = parseSessionRecord(value)
  if (!parsed.ok) return null
  return parsed.asIs ? { record: parsed.record, parsed: value } : { record: parsed.record }
}

/**
 * The answer for record `id` as read: a settled record named by its id, sealed by this user for this project
 * (the store's check), whose folder is there, absolute and inside the project (docs/security.md, "hcd"); a
 * worktree.root elsewhere needs the config, and a refusal its message: the full CLI answers those.
 */
function settledPath(
  id: string,
  { record, parsed }: Read,
  { harnessDir, env }: { harnessDir: string; env: NodeJS.ProcessEnv },
): { id: string; path: string } | null {
  if (!SETTLED.has(record.status) || record.id !== id || !pathExists(record.worktree_dir)) return null
  const project = projectScope(dirname(harnessDir))
  if (new RecordSealer(sealKeyFile(env)).check(record, project, parsed) !== null) return null
  if (!isAbsolute(record.worktree_dir)) return null
  const folder = projectScope(record.worktree_dir)
  if (folder !== project && !folder.startsWith(project.endsWith(sep) ? project : `${project}${sep}`))
    return null
  return { id, path: record.worktree_dir }
}

/** `.harness/` as Context.project() finds it, or null where it would need git or report an error. */
function findHarnessDir(
  dir: string | undefined,
  around: { cwd: string; env: NodeJS.ProcessEnv },
): string | null {
  if (dir === '') return null
  const given = dir ?? (around.env.HARNESS_DIR || undefined)
  if (given === undefined) return walkUp(around.cwd)
  const abs = resolve(around.cwd, given)
  const isHarnessDir = basename(abs) === HARNESS_DIR_NAME
  if (!statOrNull(isHarnessDir ? dirname(abs) : abs)?.isDirectory()) return null
  return isHarnessDir ? abs : join(abs, HARNESS_DIR_NAME)
}
