import { dirname, join } from 'node:path'
import { createGunzip } from 'node:zlib'
import type { ReadEntry } from 'tar'
import * as z from 'zod/mini'
import { hashOf } from '../digest.js'
import {
  createNewFile,
  ensureDir,
  JsonTextError,
  LIMITS,
  parseJson,
  readStreamOf,
  syncAndClose,
  unlinkQuiet,
  writeAll,
} from '../disk/door.js'
import { ExitCode, HarnessError } from '../errors.js'

export { filesUnder, hashFile } from '../disk/door.js'

/**
 * The archive format (docs/history.md, "Archive"): a gzipped tar whose first member is `manifest.json`, then
 * per session `sessions/<id>.json` (and `sessions/<id>.prompt`), `logs/<id>.log`, `agents/<id>/…` and
 * `git/<id>.bundle`. The manifest
 * lists every other member with its size and sha256; an archive is good only when exactly those members are
 * there with exactly those hashes.
 */
export const MANIFEST = 'manifest.json'
export const ARCHIVE_FORMAT = 'harness-archive'

const ID = '[A-Za-z0-9][A-Za-z0-9_-]{0,63}'
/** The only member names an archive may hold: nothing absolute, no `..`, no other folder. */
/** One path component of an agent file: never `.` or `..`, so nothing lands outside `agents/<id>/`. */
const PART = '(?!\\.\\.?(?:/|$))[^/\\0]+'
export const MEMBER_PATTERN = new RegExp(
  `^(?:sessions/${ID}\\.json|sessions/${ID}\\.prompt|logs/${ID}\\.log|git/${ID}\\.bundle|agents/${ID}/(?:${PART}/)*${PART})$`,
)

const RefSchema = z.object({ ref: z.string(), commit: z.string().check(z.regex(/^[0-9a-f]{40,64}$/)) })

const ArchivedSessionSchema = z.object({
  id: z.string().check(z.regex(new RegExp(`^${ID}$`))),
  /** The repository the refs belong to, when the session had one. */
  repo: z.nullable(z.string()),
  /** Refs as they were: the session's branch and its checkpoints. */
  refs: z.array(RefSchema),
  /** The bundle member, or null when no ref held a commit beyond the base (the refs are then recreated). */
  bundle: z.nullable(z.string()),
  record: z.string(),
  /** A prompt too long for the record, kept beside it (sessions/record/bounds.ts); absent in older archives. */
  prompt: z.optional(z.nullable(z.string())),
  log: z.nullable(z.string()),
  agent_files: z.array(z.string()),
})
export type ArchivedSession = z.infer<typeof ArchivedSessionSchema>

const MemberSchema = z.object({
  path: z.string().check(z.regex(MEMBER_PATTERN)),
  size: z.number(),
  sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
})
export type ArchiveMember = z.infer<typeof MemberSchema>

const ManifestSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  version: z.literal(1),
  created_at: z.string(),
  harness_version: z.string(),
  sessions: z.array(ArchivedSessionSchema),
  members: z.array(MemberSchema),
})
export type Manifest = z.infer<typeof ManifestSchema>

export class CorruptArchiveError extends HarnessError {
  constructor(file: string, reason: string, cause?: unknown) {
    super(
      'ARCHIVE_CORRUPT',
      `${file} is not a good archive: ${reason}`,
      ExitCode.Failure,
      'nothing was changed; keep the file for inspection, or use another copy',
      cause,
    )
  }
}

/** The most members an archive may list, and the most bytes its members may add up to (checked before inflating). */
const ARCHIVE_LIMITS = { members: 100_000, totalBytes: 64 * 1024 ** 3 } as const

/**
 * Packs `staging` (which holds the manifest and the members it lists) into `file`, a new file (exclusive,
 * 0600), gzipped and fsynced. Members are added by name in the manifest's order, so nothing else in the folder
 * can slip in. A full disk is DISK_FULL, and the partial file is removed.
 */
export async function writeArchive(file: string, staging: string, manifest: Manifest): Promise<void> {
  const tar = await loadTar()
  // Records and logs hold prompts and agent output: the archive is the user's alone, like they are.
  const fd = createNewFile(file)
  try {
    const stream = tar.create({ gzip: true, cwd: staging, portable: true, noDirRecurse: true }, [
      MANIFEST,
      ...manifest.members.map((m) => m.path),
    ])
    for await (const chunk of stream) writeAll(fd, chunk as Buffer, file)
  } catch (error) {
    closeQuietly(fd)
    unlinkQuiet(file)
    throw error
  }
  syncAndClose(fd, file)
}

function closeQuietly(fd: number): void {
  try {
    syncAndClose(fd, '')
  } catch {}
}

/** What reading an archive has found so far. */
interface ReadState {
  file: string
  extractTo: string | undefined
  manifest: Manifest | null
  /** Declared sizes of the members not yet read. */
  declared: Map<string, ArchiveMember>
  seen: Map<string, { sha256: string; size: number }>
  problems: string[]
  /** Inflated bytes read, and the most the archive may inflate to (known once the manifest is read). */
  inflated: number
  allowed: number
  /** The member files this read created, removed again if it fails. */
  written: string[]
  /** Stops the read with an error (set while the stream runs). */
  fail: (error: unknown) => void
}

/** A refusal that stops the read at once (a bomb or a lie about sizes): nothing more is inflated. */
class StopReading extends Error {}

/**
 * Reads an archive through, checking every member against its manifest; with `extractTo`, writes the
 * members there as it goes (files 0600, folders 0700). Sizes are checked before anything is inflated: the
 * manifest (the first member) is at most LIMITS.manifest, every other member must be listed there with the
 * size its tar header declares, the declared sizes are bounded in count and total, and the gzip stream is
 * stopped as soon as it inflates beyond what the manifest declares (a gzip bomb stops early). Throws
 * CorruptArchiveError for anything amiss; a full disk while extracting is DISK_FULL.
 */
export async function readArchive(file: string, extractTo?: string): Promise<Manifest> {
  const state: ReadState = {
    file,
    extractTo,
    manifest: null,
    declared: new Map(),
    seen: new Map(),
    problems: [],
    inflated: 0,
    allowed: LIMITS.manifest + 64 * 1024,
    written: [],
    fail: () => {},
  }
  try {
    await inflateAndParse(state)
    return checkMembers(state)
  } catch (error) {
    for (const path of state.written) unlinkQuiet(path)
    if (error instanceof HarnessError) throw error
    throw new CorruptArchiveError(file, (error as Error).message, error)
  }
}

/** Streams the file through gunzip, counting inflated bytes, into tar's parser. */
async function inflateAndParse(state: ReadState): Promise<void> {
  const tar = await loadTar()
  const source = readStreamOf(state.file)
  const gunzip = createGunzip()
  await new Promise<void>((resolvePromise, reject) => {
    let failed = false
    const fail = (error: unknown) => {
      if (failed) return
      failed = true
      source.destroy()
      gunzip.destroy()
      reject(error)
    }
    state.fail = fail
    const parser = new tar.Parser({
      strict: true,
      onReadEntry: (entry) => {
        try {
          readEntry(state, entry)
        } catch (error) {
          fail(error)
        }
      },
    })
    parser.on('error', fail)
    parser.on('end', () => (failed ? undefined : resolvePromise()))
    source.on('error', fail)
    gunzip.on('error', fail)
    gunzip.on('data', (chunk: Buffer) => {
      if (failed) return
      state.inflated += chunk.length
      if (state.inflated > state.allowed) {
        fail(new StopReading(`it inflates beyond the ${state.allowed} bytes its manifest declares`))
        return
      }
      try {
        if (!parser.write(chunk)) {
          gunzip.pause()
          parser.once('drain', () => gunzip.resume())
        }
      } catch (error) {
        fail(error)
      }
    })
    gunzip.on('end', () => {
      if (failed) return
      try {
        parser.end()
      } catch (error) {
        fail(error)
      }
    })
    source.pipe(gunzip)
  })
}

type TarEntry = ReadEntry

/** tar, loaded only when an archive is written or read, or a Slurm job's agent folder packed or unpacked. */
export const loadTar = () => import('tar')

/** One tar entry: the manifest first, then only members it lists, each with the size it declares. */
function readEntry(state: ReadState, entry: TarEntry): void {
  const path = entry.path
  if (entry.type !== 'File') {
    if (entry.type !== 'Directory') state.problems.push(`unexpected ${entry.type} member ${path}`)
    entry.resume()
    return
  }
  if (!state.manifest) {
    if (path !== MANIFEST)
      throw new StopReading(`its first member is ${JSON.stringify(path)}, not ${MANIFEST}`)
    if (entry.size > LIMITS.manifest) {
      throw new StopReading(`its ${MANIFEST} declares ${entry.size} bytes, over ${LIMITS.manifest}`)
    }
    readManifestEntry(state, entry)
    return
  }
  const member = state.declared.get(path)
  if (!member) {
    const known = MEMBER_PATTERN.test(path) && !state.seen.has(path)
    throw new StopReading(
      known ? `member ${path} is not in the manifest` : `unexpected member ${JSON.stringify(path)}`,
    )
  }
  if (entry.size !== member.size) {
    throw new StopReading(`member ${path} is ${entry.size} bytes, its manifest says ${member.size}`)
  }
  state.declared.delete(path)
  readMember(state, entry, path)
}

/** Buffers the manifest (bounded by its declared size) and, once whole, parses it and sets the inflate bound. */
function readManifestEntry(state: ReadState, entry: TarEntry): void {
  const chunks: Buffer[] = []
  entry.on('data', (chunk: Buffer) => chunks.push(chunk))
  entry.on('end', () =>
    guarded(state, () => {
      const manifest = parseManifest(state.file, Buffer.concat(chunks).toString('utf8'))
      let total = 0
      for (const member of manifest.members) {
        total += member.size
        state.declared.set(member.path, member)
      }
      if (manifest.members.length > ARCHIVE_LIMITS.members || total > ARCHIVE_LIMITS.totalBytes) {
        throw new StopReading(
          `its manifest declares ${manifest.members.length} members of ${total} bytes, over the limits`,
        )
      }
      state.manifest = manifest
      // Each member: its bytes padded to 512, a header and room for a long-name header; then tar's end blocks.
      state.allowed = state.inflated + 64 * 1024 + manifest.members.reduce((sum, m) => sum + m.size + 4096, 0)
    }),
  )
}

/** Runs an entry's handler; what it throws stops the read (a throw inside tar's events would be lost). */
function guarded(state: ReadState, handler: () => void): void {
  try {
    handler()
  } catch (error) {
    state.fail(error)
  }
}

function readMember(state: ReadState, entry: TarEntry, path: string): void {
  const hash = hashOf('sha256')
  let size = 0
  let fd: number | null = null
  let target = ''
  if (state.extractTo) {
    target = join(state.extractTo, path)
    ensureDir(dirname(target))
    fd = createNewFile(target)
    state.written.push(target)
  }
  entry.on('data', (chunk: Buffer) =>
    guarded(state, () => {
      hash.update(chunk)
      size += chunk.length
      if (fd !== null) writeAll(fd, chunk, target)
    }),
  )
  entry.on('end', () =>
    guarded(state, () => {
      if (fd !== null) syncAndClose(fd, target)
      fd = null
      state.seen.set(path, { sha256: hash.digest('hex'), size })
    }),
  )
}

function parseManifest(file: string, text: string): Manifest {
  try {
    const parsed = z.safeParse(ManifestSchema, parseJson(text))
    if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid')
    return parsed.data
  } catch (error) {
    const reason = error instanceof JsonTextError ? error.reason : (error as Error).message
    throw new CorruptArchiveError(file, `its ${MANIFEST} is not valid: ${reason}`, error)
  }
}

/** After the whole stream: every listed member there with its hash, nothing else. */
function checkMembers(state: ReadState): Manifest {
  const { manifest, problems } = state
  if (!manifest) throw new CorruptArchiveError(state.file, `it has no ${MANIFEST}`)
  for (const member of manifest.members) {
    const got = state.seen.get(member.path)
    if (!got) problems.push(`member ${member.path} is missing`)
    else if (got.size !== member.size || got.sha256 !== member.sha256)
      problems.push(`member ${member.path} does not match its sha256 in the manifest`)
  }
  if (problems.length) {
    for (const path of state.written) unlinkQuiet(path)
    throw new CorruptArchiveError(state.file, problems.slice(0, 3).join('; '))
  }
  return manifest
}
