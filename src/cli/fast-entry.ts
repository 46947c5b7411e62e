/**
 * The small entry that bin/harness (and the single executable) runs before the bundle: it answers the plain
 * `harness session path <id>` and the top-level help from node's built-ins alone, without reading the bundle,
 * zod or commander (docs/development/native.md, "Start-up"). It answers only when the answer is certainly the
 * one the full CLI would give, byte for byte, with the same exit code; for anything else (an error to report,
 * a record that is not plainly valid, a RUNNING session whose liveness the full CLI checks, a terminal whose
 * width the help would wrap to) it returns null and the full CLI answers.
 */
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path'
import {
  fdMayBeTerminal,
  parseJson,
  pathExists,
  readDirNames,
  readText,
  statOrNull,
  writeToFd,
} from '../disk/door.js'
import { assertOwnFolders, HARNESS_DIR_NAME, pathsFor, walkUp } from '../project.js'
import { isValidSessionId, resolveIdAmong } from '../sessions/record/ids.js'
import { mayBeName, namesDirFor, readNameIndex } from '../sessions/record/names.js'
import { projectScope, RecordSealer, sealKeyFile } from '../sessions/record/seal.js'
import { fastCall } from './fast-path.js'
import { type JsonShape, matchesShape } from './record-shape.js'

/** What `npm run build` captures from the full CLI and from the record schema (scripts/build.mjs). */
export interface BuiltAnswers {
  /** `harness --help` with stdout not a terminal (commander then wraps at 80 columns). */
  help: string
  /** `harness` alone, with stderr not a terminal: its stderr and exit code. */
  noCommand: { stderr: string; exitCode: number }
  /** The record schema as JSON Schema (`z.toJSONSchema`, input side). */
  recordShape: JsonShape
}

export interface Surroundings {
  cwd: string
  env: NodeJS.ProcessEnv
  stdoutIsTerminal: boolean
  stderrIsTerminal: boolean
}

export interface FastAnswer {
  stdout: string
  stderr: string
  exitCode: number
}

/** Statuses whose record `session path` prints as it is: a RUNNING one is reconciled first (sessions/query/query.ts). */
const SETTLED = new Set(['PAUSED', 'COMPLETED', 'FAILED', 'KILLED'])

/** The full CLI's answer to `argv`, when it can be given here; null leaves it to the full CLI. */
export function fastAnswer(
  argv: readonly string[],
  around: Surroundings,
  built: BuiltAnswers,
): FastAnswer | null {
  const call = fastCall(argv)
  if (!call) return null
  // commander would colour or not by these, and wrap to a terminal's width.
  const colourForced = around.env.FORCE_COLOR !== undefined || around.env.CLICOLOR_FORCE !== undefined
  switch (call.kind) {
    case 'help':
      return around.stdoutIsTerminal || colourForced ? null : { stdout: built.help, stderr: '', exitCode: 0 }
    case 'no-command':
      return around.stderrIsTerminal || colourForced
        ? null
        : { stdout: '', stderr: built.noCommand.stderr, exitCode: built.noCommand.exitCode }
    case 'path': {
      let path: { id: string; path: string } | null
      try {
        path = sessionPath(call.id, call.dir, around, built.recordShape)
      } catch {
        return null // the full CLI reports it (or finds that it was nothing)
      }
      if (!path) return null
      return {
        stdout: call.json
          ? `${JSON.stringify(path, null, 2)}\n`
          : `${path.path}${path.path.endsWith('\n') ? '' : '\n'}`,
        stderr: '',
        exitCode: 0,
      }
    }
  }
}

/**
 * What `session path` (sessions/query/query.ts) prints for a settled record found without doubt, following the
 * same steps: the project as cli/context.ts finds it, the id as resolveSessionId resolves it, the record as
 * the store reads it (valid, named by its id), and its folder present.
 */
function sessionPath(
  input: string,
  dir: string | undefined,
  around: Surroundings,
  shape: JsonShape,
): { id: string; path: string } | null {
  const harnessDir = findHarnessDir(dir, around)
  if (!harnessDir) return null
  const paths = pathsFor(harnessDir)
  assertOwnFolders(paths)
  if (!isValidSessionId(input)) return null
  const file = (id: string) => join(paths.sessionsDir, `${id}.json`)
  let id = input
  if (!statOrNull(file(input))?.isFile()) {
    // A name comes before a prefix (resolveSessionId): its index, when the record it names carries that name.
    const named = mayBeName(input) ? readNameIndex(namesDirFor(paths.sessionsDir), input) : null
    if (named !== null && statOrNull(file(named))?.isFile()) {
      const record: unknown = parseJson(readText(file(named), 'record'))
      if (!matchesShape(shape, record)) return null
      if ((record as { name?: unknown }).name === input)
        return settledPath(named, record, shape, harnessDir, around)
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
  return settledPath(id, parseJson(readText(file(id), 'record')), shape, harnessDir, around)
}

/** The answer for record `id` as read: a valid, settled, sealed record named by its id, whose folder is there in the project. */
function settledPath(
  id: string,
  record: unknown,
  shape: JsonShape,
  harnessDir: string,
  around: Surroundings,
): { id: string; path: string } | null {
  if (!isSettledRecord(shape, record) || record.id !== id || !pathExists(record.worktree_dir)) return null
  // Only a folder of a sealed record, absolute, inside the project (docs/security.md, "hcd"); a worktree.root
  // elsewhere needs the config, and a refusal its message: the full CLI answers those.
  const project = projectScope(dirname(harnessDir))
  // The store checks the seal of the record as zod reads it, its status upper-cased: only then is it the same.
  if (record.status !== record.status.toUpperCase()) return null
  if (new RecordSealer(sealKeyFile(around.env)).check(record, project) !== null) return null
  if (!isAbsolute(record.worktree_dir)) return null
  const folder = projectScope(record.worktree_dir)
  if (folder !== project && !folder.startsWith(project.endsWith(sep) ? project : `${project}${sep}`))
    return null
  return { id, path: record.worktree_dir }
}

/**
 * Whether `value` is a record the store reads as valid (zod's schema, sessions/record/schema.ts) and settled. The
 * JSON Schema knows the status only as a string (zod reads it upper-cased, then checks it): checked here.
 */
export function isSettledRecord(
  shape: JsonShape,
  value: unknown,
): value is { id: string; status: string; worktree_dir: string } {
  if (!matchesShape(shape, value)) return false
  const { status } = value as { status: unknown }
  return typeof status === 'string' && SETTLED.has(status.toUpperCase())
}

/** `.harness/` as Context.project() finds it, or null where it would need git or report an error. */
function findHarnessDir(dir: string | undefined, around: Surroundings): string | null {
  if (dir === '') return null
  const given = dir ?? (around.env.HARNESS_DIR || undefined)
  if (given === undefined) return walkUp(around.cwd)
  const abs = resolve(around.cwd, given)
  const isHarnessDir = basename(abs) === HARNESS_DIR_NAME
  if (!statOrNull(isHarnessDir ? dirname(abs) : abs)?.isDirectory()) return null
  return isHarnessDir ? abs : join(abs, HARNESS_DIR_NAME)
}

declare const HARNESS_BUILT_ANSWERS: BuiltAnswers

/**
 * Runs the fast answer for this process: prints it and returns the exit code, or returns null (nothing
 * printed) for the full CLI to take over. The defines come from scripts/build.mjs. It writes with
 * fs.writeSync: `process.stdout` alone would load node's whole stream stack, which costs more than the rest.
 */
export function answer(argv: readonly string[]): number | null {
  let cwd: string
  try {
    cwd = process.cwd()
  } catch {
    return null // a removed working folder: the full CLI says so
  }
  const found = fastAnswer(
    argv,
    { cwd, env: process.env, stdoutIsTerminal: mayBeTerminal(1), stderrIsTerminal: mayBeTerminal(2) },
    HARNESS_BUILT_ANSWERS,
  )
  if (!found) return null
  writeAll(1, found.stdout)
  writeAll(2, found.stderr)
  return found.exitCode
}

/** A character device other than /dev/null may be a terminal: the full CLI answers then. */
function mayBeTerminal(fd: number): boolean {
  try {
    return fdMayBeTerminal(fd)
  } catch {
    return true
  }
}

/** The whole text, or as much as a reader takes: one that has gone away (`| head`) is not an error (cli/output.ts). */
function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text)
  let done = 0
  while (done < bytes.length) {
    try {
      done += writeToFd(fd, bytes, done)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EPIPE' || code === 'EIO') return
      if (code !== 'EAGAIN') throw error // EAGAIN: a non-blocking pipe that is full, to be tried again
    }
  }
}
