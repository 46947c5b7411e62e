/**
 * The small entry that bin/harness runs before the bundle, and the native executable before the rest of
 * itself: it answers the plain `harness session path <id>` and the top-level help from node's built-ins and
 * the record's validator alone, without reading the bundle, zod or commander (docs/performance.md, "Start-up"). It answers only when the answer is certainly the one
 * the full CLI would give, byte for byte, with the same exit code; for anything else (an error to report, a
 * record that is not plainly valid, a RUNNING session whose liveness the full CLI checks, a terminal whose
 * width the help would wrap to) it returns null and the full CLI answers.
 */
import { basename, dirname, join, resolve } from 'node:path'
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
import { parseSessionRecord, type SessionRecord } from '../sessions/record/schema.js'
import { fastCall } from './fast-path.js'

/** What `npm run build` captures from the full CLI (scripts/build.mjs). */
export interface BuiltAnswers {
  /** `harness --help` with stdout not a terminal (commander then wraps at 80 columns). */
  help: string
  /** `harness` alone, with stderr not a terminal: its stderr and exit code. */
  noCommand: { stderr: string; exitCode: number }
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
        path = sessionPath(call.id, call.dir, around)
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
      const record = validRecord(parseJson(readText(file(named), 'record')))
      if (!record) return null
      if (record.name === input) return settledPath(named, record)
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
  const record = validRecord(parseJson(readText(file(id), 'record')))
  return record && settledPath(id, record)
}

/** The record as the store reads it (the same validator), or null for one the store would report. */
function validRecord(value: unknown): SessionRecord | null {
  const parsed = parseSessionRecord(value)
  return parsed.ok ? parsed.record : null
}

/** The answer for record `id` as read: a settled record named by its id, whose folder is there. */
function settledPath(id: string, record: SessionRecord): { id: string; path: string } | null {
  if (!SETTLED.has(record.status) || record.id !== id || !pathExists(record.worktree_dir)) return null
  return { id, path: record.worktree_dir }
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
