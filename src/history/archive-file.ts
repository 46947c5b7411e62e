import { createHash } from 'node:crypto'
import {
  closeSync,
  createReadStream,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  writeSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import * as z from 'zod/mini'
import { ExitCode, HarnessError } from '../errors.js'

/**
 * The archive format (docs/history.md, "Archive"): a gzipped tar whose first member is `manifest.json`, then
 * per session `sessions/<id>.json`, `logs/<id>.log`, `agents/<id>/…` and `git/<id>.bundle`. The manifest
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
  `^(?:sessions/${ID}\\.json|logs/${ID}\\.log|git/${ID}\\.bundle|agents/${ID}/(?:${PART}/)*${PART})$`,
)

const RefSchema = z.object({ ref: z.string(), commit: z.string().check(z.regex(/^[0-9a-f]{40,64}$/)) })

export const ArchivedSessionSchema = z.object({
  id: z.string().check(z.regex(new RegExp(`^${ID}$`))),
  /** The repository the refs belong to, when the session had one. */
  repo: z.nullable(z.string()),
  /** Refs as they were: the session's branch and its checkpoints. */
  refs: z.array(RefSchema),
  /** The bundle member, or null when no ref held a commit beyond the base (the refs are then recreated). */
  bundle: z.nullable(z.string()),
  record: z.string(),
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

export const ManifestSchema = z.object({
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

/** sha256 and size of a file, read in pieces. */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer)
    size += (chunk as Buffer).length
  }
  return { sha256: hash.digest('hex'), size }
}

/** Every regular file under `dir`, as paths relative to it (symlinks and other kinds are not followed). */
export function filesUnder(dir: string, prefix = ''): string[] {
  const files: string[] = []
  let entries: string[]
  try {
    entries = readdirSync(join(dir, prefix)).sort()
  } catch {
    return files
  }
  for (const name of entries) {
    const rel = prefix ? `${prefix}/${name}` : name
    const stat = lstatSync(join(dir, rel))
    if (stat.isDirectory()) files.push(...filesUnder(dir, rel))
    else if (stat.isFile()) files.push(rel)
  }
  return files
}

/**
 * Packs `staging` (which holds the manifest and the members it lists) into `file`, gzipped, and fsyncs it.
 * Members are added by name in the manifest's order, so nothing else in the folder can slip in.
 */
export async function writeArchive(file: string, staging: string, manifest: Manifest): Promise<void> {
  const tar = await import('tar')
  // Records and logs hold prompts and agent output: the archive is the user's alone, like they are.
  closeSync(openSync(file, 'wx', 0o600))
  await tar.create({ gzip: true, file, cwd: staging, portable: true, noDirRecurse: true }, [
    MANIFEST,
    ...manifest.members.map((m) => m.path),
  ])
  const fd = openSync(file, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Reads an archive through, checking every member against its manifest; with `extractTo`, writes the
 * members there as it goes (files 0600, folders 0700). Throws CorruptArchiveError for anything amiss: a
 * gzip or tar error (a flipped byte, a truncated file), a missing, extra, resized or changed member.
 */
export async function readArchive(file: string, extractTo?: string): Promise<Manifest> {
  const tar = await import('tar')
  let manifest: Manifest | null = null
  let manifestText = ''
  const seen = new Map<string, { sha256: string; size: number }>()
  const problems: string[] = []
  const pending: Promise<void>[] = []
  try {
    await tar.list({
      file,
      strict: true,
      onReadEntry: (entry) => {
        const path = entry.path
        if (entry.type !== 'File') {
          if (entry.type !== 'Directory') problems.push(`unexpected ${entry.type} member ${path}`)
          entry.resume()
          return
        }
        if (path === MANIFEST) {
          const chunks: Buffer[] = []
          entry.on('data', (chunk: Buffer) => chunks.push(chunk))
          pending.push(
            new Promise((resolve) =>
              entry.on('end', () => {
                manifestText = Buffer.concat(chunks).toString('utf8')
                resolve()
              }),
            ),
          )
          return
        }
        if (!MEMBER_PATTERN.test(path) || seen.has(path)) {
          problems.push(`unexpected member ${JSON.stringify(path)}`)
          entry.resume()
          return
        }
        const hash = createHash('sha256')
        let size = 0
        let fd: number | null = null
        if (extractTo) {
          const target = join(extractTo, path)
          mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
          fd = openSync(target, 'wx', 0o600)
        }
        entry.on('data', (chunk: Buffer) => {
          hash.update(chunk)
          size += chunk.length
          if (fd !== null) writeSync(fd, chunk)
        })
        pending.push(
          new Promise((resolve) =>
            entry.on('end', () => {
              if (fd !== null) closeSync(fd)
              seen.set(path, { sha256: hash.digest('hex'), size })
              resolve()
            }),
          ),
        )
      },
    })
    await Promise.all(pending)
  } catch (error) {
    throw new CorruptArchiveError(file, (error as Error).message, error)
  }
  if (!manifestText) throw new CorruptArchiveError(file, `it has no ${MANIFEST}`)
  try {
    const parsed = z.safeParse(ManifestSchema, JSON.parse(manifestText))
    if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'invalid')
    manifest = parsed.data
  } catch (error) {
    throw new CorruptArchiveError(file, `its ${MANIFEST} is not valid: ${(error as Error).message}`, error)
  }
  const listed = new Set<string>()
  for (const member of manifest.members) {
    listed.add(member.path)
    const got = seen.get(member.path)
    if (!got) problems.push(`member ${member.path} is missing`)
    else if (got.size !== member.size || got.sha256 !== member.sha256)
      problems.push(`member ${member.path} does not match its sha256 in the manifest`)
  }
  for (const path of seen.keys())
    if (!listed.has(path)) problems.push(`member ${path} is not in the manifest`)
  if (problems.length) throw new CorruptArchiveError(file, problems.slice(0, 3).join('; '))
  return manifest
}
