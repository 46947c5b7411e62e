/**
 * What a checkpoint needs to know about a worktree's index, read from the file itself instead of from two more
 * git processes (docs/performance.md, "Checkpoints"): whether any entry carries a flag that hides edits
 * (assume-unchanged, skip-worktree) or is unusual (intent-to-add, a conflict stage), and the index's tree when
 * its cache-tree says it is valid. Anything this reader is not sure of gives null, and git is asked instead.
 */
export interface IndexSummary {
  /** An entry is marked assume-unchanged or has extended flags (skip-worktree, intent-to-add). */
  flagged: boolean
  /** An entry is at a conflict stage (the index has no tree). */
  conflicted: boolean
  /** The root tree recorded in the cache-tree extension, null when it is absent or invalidated. */
  rootTree: string | null
}

export function parseIndexSummary(buffer: Buffer, oidBytes: number): IndexSummary | null {
  if (buffer.length < 12 || buffer.toString('latin1', 0, 4) !== 'DIRC') return null
  const version = buffer.readUInt32BE(4)
  // Version 4 compresses paths; a reader for it is not worth the two processes it would save.
  if (version !== 2 && version !== 3) return null
  const count = buffer.readUInt32BE(8)
  const fixed = 40 + oidBytes + 2
  let offset = 12
  let flagged = false
  let conflicted = false
  for (let i = 0; i < count; i++) {
    if (offset + fixed > buffer.length) return null
    const flags = buffer.readUInt16BE(offset + 40 + oidBytes)
    const extended = (flags & 0x4000) !== 0
    if ((flags & 0x8000) !== 0 || extended) flagged = true
    if ((flags & 0x3000) !== 0) conflicted = true
    const pathStart = offset + fixed + (extended ? 2 : 0)
    const end = buffer.indexOf(0, pathStart)
    if (end < 0) return null
    // Entries are padded with 1–8 NULs to a multiple of 8 bytes.
    offset += (end - offset + 8) & ~7
  }
  let rootTree: string | null = null
  const trailer = buffer.length - oidBytes
  while (offset + 8 <= trailer) {
    const signature = buffer.toString('latin1', offset, offset + 4)
    const size = buffer.readUInt32BE(offset + 4)
    const data = offset + 8
    if (data + size > trailer) return null
    // A split index keeps its entries in another file; a sparse one has folder entries: git knows best.
    if (signature === 'link' || signature === 'sdir') return null
    if (signature === 'TREE')
      rootTree = cacheTreeRoot(buffer.subarray(data, data + size), oidBytes)?.oid ?? null
    offset = data + size
  }
  return { flagged, conflicted, rootTree }
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
