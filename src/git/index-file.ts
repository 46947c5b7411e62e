import { hashOf } from '../digest.js'

/**
 * What a checkpoint needs to know about a worktree's index, read from the file itself instead of from two more
 * git processes (docs/development/design.md, "Checkpoints"): whether any entry carries a flag that hides
 * edits (assume-unchanged, skip-worktree) or is unusual (intent-to-add, a conflict stage), and the index's
 * tree when its cache-tree says it is valid. Anything this reader is not sure of gives null, and git is asked
 * instead.
 */
export interface IndexSummary {
  /** An entry is marked assume-unchanged or has extended flags (skip-worktree, intent-to-add). */
  flagged: boolean
  /** An entry is at a conflict stage (the index has no tree). */
  conflicted: boolean
  /** The root tree recorded in the cache-tree extension, null when it is absent or invalidated. */
  rootTree: string | null
}

/** One index entry: its stat data as git stored it (32-bit fields), mode, object id, flags and path. */
export interface IndexEntry {
  ctimeSec: number
  ctimeNsec: number
  mtimeSec: number
  mtimeNsec: number
  dev: number
  ino: number
  mode: number
  uid: number
  gid: number
  size: number
  oid: string
  /** The 16-bit flags word: assume-valid (0x8000), extended (0x4000), stage (0x3000), name length. */
  flags: number
  /** Extended flags (index v3): skip-worktree, intent-to-add; 0 when absent. */
  extendedFlags: number
  path: string
}

export interface ParsedIndex {
  version: number
  entries: IndexEntry[]
  /** The cache-tree's root: its tree and how many entries it covers; null when absent or invalidated. */
  root: { oid: string; entries: number } | null
}

/**
 * The one reader of git's index file, versions 2 and 3: `visit` gets each entry's offset, flags word, extended
 * flags and where its path lies. Null for anything else, which callers leave to git: version 4 (compressed
 * paths), a split index (`link`), a sparse one (`sdir`), any extension git requires readers to understand
 * (lower-case signature), a truncated file, and with `verify` a checksum that does not match.
 */
function walkIndex(
  buffer: Buffer,
  oidBytes: number,
  verify: boolean,
  visit: (offset: number, flags: number, extendedFlags: number, pathStart: number, end: number) => void,
): { version: number; root: ParsedIndex['root'] } | null {
  if (buffer.length < 12 + oidBytes || buffer.toString('latin1', 0, 4) !== 'DIRC') return null
  const version = buffer.readUInt32BE(4)
  if (version !== 2 && version !== 3) return null
  const trailer = buffer.length - oidBytes
  const stored = buffer.subarray(trailer)
  // index.skipHash writes a zero checksum; anything else must match the content.
  if (verify && stored.some((byte) => byte !== 0)) {
    const hash = hashOf(oidBytes === 32 ? 'sha256' : 'sha1')
      .update(buffer.subarray(0, trailer))
      .digest()
    if (!hash.equals(stored)) return null
  }
  const count = buffer.readUInt32BE(8)
  const fixed = 40 + oidBytes + 2
  let offset = 12
  for (let i = 0; i < count; i++) {
    if (offset + fixed > trailer) return null
    const flags = buffer.readUInt16BE(offset + 40 + oidBytes)
    const extended = (flags & 0x4000) !== 0
    if (extended && version < 3) return null
    const pathStart = offset + fixed + (extended ? 2 : 0)
    const end = buffer.indexOf(0, pathStart)
    if (end < 0 || end >= trailer) return null
    const nameLength = flags & 0xfff
    if (nameLength < 0xfff && nameLength !== end - pathStart) return null
    visit(offset, flags, extended ? buffer.readUInt16BE(offset + fixed) : 0, pathStart, end)
    // Entries are padded with 1–8 NULs to a multiple of 8 bytes.
    offset += (end - offset + 8) & ~7
  }
  if (offset > trailer) return null
  let root: ParsedIndex['root'] = null
  while (offset < trailer) {
    if (offset + 8 > trailer) return null
    const signature = buffer.toString('latin1', offset, offset + 4)
    const size = buffer.readUInt32BE(offset + 4)
    const data = offset + 8
    if (data + size > trailer) return null
    // Upper case: optional to understand (REUC, UNTR, FSMN, EOIE, IEOT); lower case (link, sdir): required.
    if (!/^[A-Z]/.test(signature)) return null
    if (signature === 'TREE') root = cacheTreeRoot(buffer.subarray(data, data + size), oidBytes)
    offset = data + size
  }
  return { version, root }
}

/** Every entry of an index file of version 2 or 3, its checksum verified (null as for `walkIndex`). */
export function parseIndex(buffer: Buffer, oidBytes: number): ParsedIndex | null {
  const entries: IndexEntry[] = []
  const walked = walkIndex(buffer, oidBytes, true, (offset, flags, extendedFlags, pathStart, end) => {
    entries.push({
      ctimeSec: buffer.readUInt32BE(offset),
      ctimeNsec: buffer.readUInt32BE(offset + 4),
      mtimeSec: buffer.readUInt32BE(offset + 8),
      mtimeNsec: buffer.readUInt32BE(offset + 12),
      dev: buffer.readUInt32BE(offset + 16),
      ino: buffer.readUInt32BE(offset + 20),
      mode: buffer.readUInt32BE(offset + 24),
      uid: buffer.readUInt32BE(offset + 28),
      gid: buffer.readUInt32BE(offset + 32),
      size: buffer.readUInt32BE(offset + 36),
      oid: buffer.toString('hex', offset + 40, offset + 40 + oidBytes),
      flags,
      extendedFlags,
      path: buffer.toString('utf8', pathStart, end),
    })
  })
  return walked && { ...walked, entries }
}

/** The summary a checkpoint needs, without building entries or hashing the file. */
export function parseIndexSummary(buffer: Buffer, oidBytes: number): IndexSummary | null {
  let flagged = false
  let conflicted = false
  const walked = walkIndex(buffer, oidBytes, false, (_offset, flags) => {
    if ((flags & 0xc000) !== 0) flagged = true
    if ((flags & 0x3000) !== 0) conflicted = true
  })
  return walked && { flagged, conflicted, rootTree: walked.root?.oid ?? null }
}

/**
 * The first cache-tree entry is the root: `"" NUL <entries> SP <subtrees> LF [oid]`, entries -1 = invalid.
 * Returns its tree and how many index entries it covers, or null when it is invalid or unreadable.
 */
export function cacheTreeRoot(tree: Buffer, oidBytes: number): { oid: string; entries: number } | null {
  const nul = tree.indexOf(0)
  const lf = tree.indexOf(0x0a, nul + 1)
  if (nul !== 0 || lf < 0) return null
  const [entries] = tree.toString('latin1', nul + 1, lf).split(' ')
  if (entries === undefined || !/^\d+$/.test(entries)) return null
  if (lf + 1 + oidBytes > tree.length) return null
  return { oid: tree.toString('hex', lf + 1, lf + 1 + oidBytes), entries: Number(entries) }
}

/**
 * The paths of the gitlinks (nested repositories, mode 160000) of an index file of version 2 or 3, its checksum
 * not verified (the caller wrote it); null for anything `walkIndex` leaves to git.
 */
export function indexGitlinks(buffer: Buffer, oidBytes: number): string[] | null {
  const gitlinks: string[] = []
  const walked = walkIndex(buffer, oidBytes, false, (offset, _flags, _extended, pathStart, end) => {
    if (buffer.readUInt32BE(offset + 24) === 0o160000) gitlinks.push(buffer.toString('utf8', pathStart, end))
  })
  return walked && gitlinks
}
