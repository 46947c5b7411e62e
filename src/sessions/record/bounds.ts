import { join } from 'node:path'
import { sha256Hex } from '../../digest.js'
import { LIMITS, readText, UnsafeFileError, writeFileAtomic } from '../../disk/door.js'
import { ExitCode, HarnessError } from '../../errors.js'
import type { SessionRecord } from './schema.js'

/*
 * Limits where a record is written, not only where it is read (docs/security.md, "Limits at write time"):
 * harness never writes a record it could not read back. A long prompt goes to a file beside the record, long
 * arguments and long lists of files are kept short in it, and a record that would still pass the read limit
 * is not written at all.
 */

/** A prompt longer than this (UTF-8 bytes) is kept in `<id>.prompt` beside the record, not in it. */
export const PROMPT_INLINE_BYTES = 16 * 1024
/** What the record keeps of such a prompt, for lists and tables: its first characters. */
const PROMPT_PREVIEW_CHARS = 1000
/** The most a prompt may be at all (a piped one included): past it a run is refused, nothing written. */
export const PROMPT_MAX_BYTES = 16 * 1024 * 1024
/** A run's argument longer than this is recorded clipped (the prompt, in full, has its own file). */
export const ARG_INLINE_CHARS = 4096
/** `files_modified` keeps at most this many paths, and this many bytes of them; the rest is only counted. */
export const FILES_KEPT = 1000
const FILES_KEPT_BYTES = 256 * 1024

/** The record would not be readable once written: nothing is written, the old record stays as it was. */
export class RecordTooBigError extends HarnessError {
  constructor(id: string, bytes: number) {
    super(
      'RECORD_TOO_BIG',
      `the record of session "${id}" would be ${bytes} bytes, over the ${LIMITS.record} harness reads back: it was not written (the record is as it was)`,
      ExitCode.Failure,
      'a session with this many runs or checkpoints is best continued in a new one: harness run --context-from <id>',
    )
  }
}

/** The file a long prompt of session `id` is kept in, beside its record. */
export function promptPathFor(sessionsDir: string, id: string): string {
  return join(sessionsDir, `${id}.prompt`)
}

/** The record as it is written, and the text of the prompt file to write first (null: none to write). */
export interface BoundedRecord {
  record: SessionRecord
  promptText: string | null
}

/**
 * The record as it may be written (pure): a prompt over `PROMPT_INLINE_BYTES` becomes a preview and
 * `prompt_file` (its sha256 and size, which the seal covers), and run arguments over `ARG_INLINE_CHARS` are
 * clipped. A record whose prompt already went to its file (the preview and `prompt_file` agree) is left as it is.
 */
export function boundRecord(record: SessionRecord): BoundedRecord {
  let promptText: string | null = null
  let next = record
  const prompt = record.prompt
  if (typeof prompt === 'string' && Buffer.byteLength(prompt) > PROMPT_INLINE_BYTES) {
    promptText = prompt
    next = {
      ...next,
      prompt: previewOf(prompt),
      prompt_file: { sha256: sha256Hex(prompt), bytes: Buffer.byteLength(prompt) },
    }
  }
  if (record.runs?.some((run) => run.args?.some((arg) => arg.length > ARG_INLINE_CHARS))) {
    next = {
      ...next,
      runs: record.runs.map((run) =>
        run.args?.some((arg) => arg.length > ARG_INLINE_CHARS)
          ? { ...run, args: run.args.map(clipArg) }
          : run,
      ),
    }
  }
  return { record: next, promptText }
}

/** The first characters of a long text, never ending inside a surrogate pair. */
function previewOf(text: string): string {
  let end = Math.min(text.length, PROMPT_PREVIEW_CHARS)
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}

function clipArg(arg: string): string {
  if (arg.length <= ARG_INLINE_CHARS) return arg
  return `${previewOf(arg)}… (${arg.length} characters in all; not recorded)`
}

/**
 * The paths of `files_modified` as recorded: at most `FILES_KEPT` of them and `FILES_KEPT_BYTES` of text, in
 * order; `total` counts them all. An agent can make any number of files with names of any length.
 */
export function boundFiles(files: readonly string[]): { kept: string[]; total: number } {
  const kept: string[] = []
  let bytes = 0
  for (const file of files) {
    bytes += Buffer.byteLength(file) + 8
    if (kept.length >= FILES_KEPT || bytes > FILES_KEPT_BYTES) break
    kept.push(file)
  }
  return { kept, total: files.length }
}

/** The record's text as it is written; RecordTooBigError when it would not be read back. */
export function checkedText(id: string, text: string): string {
  const bytes = Buffer.byteLength(text)
  if (bytes > LIMITS.record) throw new RecordTooBigError(id, bytes)
  return text
}

/** Writes a session's prompt file (0600, atomically, through the door) before the record that names it. */
export function writePromptFile(sessionsDir: string, id: string, text: string): void {
  writeFileAtomic(promptPathFor(sessionsDir, id), text)
}

/** The prompt of a session as given: the record's own, or its file's when that matches what the record sealed. */
export interface FullPrompt {
  text: string | null
  /** Why the file's text is not shown (missing, changed, not a plain file): the record's preview is. */
  problem?: string
}

/**
 * The whole prompt of `record` (docs/security.md, "Limits at write time"): the record's `prompt`, or, when it
 * went to a file, that file read through the door and checked against the sha256 and size the record holds.
 */
export function fullPrompt(sessionsDir: string, record: SessionRecord): FullPrompt {
  const file = record.prompt_file
  if (!file) return { text: record.prompt ?? null }
  const preview = record.prompt ?? null
  let text: string
  try {
    text = readText(promptPathFor(sessionsDir, record.id), 'prompt')
  } catch (error) {
    const reason =
      error instanceof UnsafeFileError
        ? error.reason
        : (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'missing'
          : String((error as NodeJS.ErrnoException).code ?? error)
    return { text: preview, problem: `its prompt file is ${reason}: only its first characters are shown` }
  }
  if (Buffer.byteLength(text) !== file.bytes || sha256Hex(text) !== file.sha256) {
    return {
      text: preview,
      problem: 'its prompt file changed after harness wrote it: only its first characters are shown',
    }
  }
  return { text }
}
