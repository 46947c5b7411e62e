import { dirname, join, normalize, sep } from 'node:path'
import {
  copyAgentFiles,
  createNewFile,
  ensureDir,
  entryExists,
  listDir,
  makeStagingDir,
  readStreamOf,
  removeHeldSync,
  renameFile,
  syncAndClose,
  writeAll,
} from '../../../disk/door.js'
import { loadTar } from '../../../history/archive-file.js'

/**
 * The session's agent folder (`.harness/agents/<id>/`, HOME is its `home/`) on its way to a job and back
 * (docs/backends.md, "The spool"): so that a real CLI's conversation, kept under HOME, resumes exactly on any
 * node. Out: a tar of the folder. Back: the job's tar is the agent's writing (SPEC §10), so it is copied
 * through the door, then read entry by entry: plain files and folders only (a link, device or FIFO is dropped),
 * relative names without `..`, bounded in count and size, into a folder of harness's own that then replaces the
 * agent folder.
 */

/** What a tar sent back may hold at most: the agent folder of a CLI is its conversation and settings. */
const AGENT_TAR_LIMITS = { entries: 100_000, bytes: 4 * 1024 ** 3 } as const

/** Packs the agent folder into `file` (a new file, 0600); false when there is nothing to send. */
export async function packAgentFolder(agentDir: string, file: string): Promise<boolean> {
  if (!entryExists(agentDir) || listDir(agentDir).length === 0) return false
  const tar = await loadTar()
  const fd = createNewFile(file)
  try {
    // Links are stored as links, never followed; the folder's own files only.
    const stream = tar.create({ cwd: agentDir, portable: true, follow: false }, ['.'])
    for await (const chunk of stream) writeAll(fd, chunk as Buffer, file)
  } catch (error) {
    syncAndClose(fd, file)
    throw error
  }
  syncAndClose(fd, file)
  return true
}

/**
 * The agent folder as the job left it (`agent-out.tar` of its run folder) in place of `agentDir`: unpacked into
 * a staging folder under `tempDir` first, then swapped in. Returns false when the job sent none.
 */
export async function unpackAgentFiles(
  runDir: string,
  name: string,
  agentDir: string,
  tempDir: string,
): Promise<boolean> {
  ensureDir(tempDir)
  const staging = makeStagingDir(tempDir, 'agent-files-')
  try {
    // Through the door: a plain file, never a link or FIFO the job put in its place.
    if (copyAgentFiles(runDir, staging, (rel) => rel === name) !== 1) return false
    const unpacked = join(staging, 'agent')
    ensureDir(unpacked)
    await extractPlain(join(staging, name), unpacked)
    const previous = `${agentDir}.old-${process.pid}`
    if (entryExists(agentDir)) renameFile(agentDir, previous)
    ensureDir(dirname(agentDir))
    renameFile(unpacked, agentDir)
    if (entryExists(previous)) removeHeldSync(previous)
    return true
  } finally {
    removeHeldSync(staging)
  }
}

/** A tar entry's name as a path below the folder, or null when it is not one (absolute, `..`, empty). */
function safeEntryPath(path: string): string | null {
  const clean = normalize(path.replace(/^\.\//, ''))
  if (clean === '.' || clean === '' || clean.startsWith(sep) || clean.split(sep).includes('..')) return null
  return clean.replace(/\/$/, '')
}

/** Reads the tar entry by entry: plain files and folders below `to`, nothing else, within the limits. */
async function extractPlain(file: string, to: string): Promise<void> {
  const tar = await loadTar()
  let entries = 0
  let bytes = 0
  await new Promise<void>((resolve, reject) => {
    const parser = new tar.Parser({
      strict: true,
      onReadEntry: (entry) => {
        entries++
        const rel = safeEntryPath(entry.path)
        const kind = entry.type
        if (entries > AGENT_TAR_LIMITS.entries || !rel || (kind !== 'File' && kind !== 'Directory')) {
          entry.resume()
          return
        }
        const target = join(to, rel)
        if (kind === 'Directory') {
          ensureDir(target)
          entry.resume()
          return
        }
        ensureDir(dirname(target))
        const fd = createNewFile(target)
        entry.on('data', (chunk: Buffer) => {
          bytes += chunk.length
          if (bytes > AGENT_TAR_LIMITS.bytes) parser.abort(new Error('the agent files are over their limit'))
          else writeAll(fd, chunk, target)
        })
        entry.on('end', () => syncAndClose(fd, target))
      },
    })
    parser.on('error', reject)
    parser.on('abort', reject)
    parser.on('end', () => resolve())
    const source = readStreamOf(file)
    source.on('error', reject)
    source.pipe(parser as unknown as NodeJS.WritableStream)
  })
}
