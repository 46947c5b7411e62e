import { join } from 'node:path'
import { copyAgentFiles, listDir, readAgentFile, unlinkQuiet, writeFileNew } from '../disk/door.js'
import { diskFaultInText } from '../errors.js'
import { type GitEnvOptions, gitAt, gitDetail } from './git.js'
import { withTempFolder } from './snapshot.js'

/**
 * The one way commits an agent made come back (SPEC §10, "What comes back from an agent is input";
 * docs/security.md): from a git directory the agent could write (a container's private clone; a remote job's
 * clone or bundle). Nothing of that directory is run or trusted:
 *
 * - git never runs in it: its config, hooks, `commondir`, alternates and refs are the agent's. Its branch is
 *   read as a file through the door (`readAgentFile`: a link, FIFO or device is refused at once, never waited
 *   on), by its full name `refs/heads/<branch>`, and must be a commit id;
 * - its objects (loose objects and packs, plain files only) are copied into a quarantine repository that harness
 *   makes for the purpose under `.harness/tmp/`, with harness's own config and the repository's objects as its
 *   alternate; there git checks that the tip is a commit;
 * - the repository fetches from the quarantine with `transfer.fsckObjects` (every object checked, the history
 *   complete) into `refs/harness/<id>/container`; the session's branch moves only by a fast-forward from the
 *   tip the run started from (recorded in the sealed record, never read from the agent), a compare and swap;
 * - every step is a git call of the one runner: under its deadline, no submodule recursion, and given up when
 *   the caller's signal aborts (a stop asked for while collecting).
 *
 * A collection that cannot finish (a full disk, a refused file, a history that fails fsck) is `failed` with its
 * reason and changes nothing: the agent's directory is kept for the next try (docs/backends.md).
 */
export type CollectOutcome =
  | { kind: 'none' }
  | { kind: 'fast-forward'; from: string; to: string; commits: number }
  /** The agent's branch does not contain the start (history rewritten): kept under `ref`, branch untouched. */
  | { kind: 'diverged'; ref: string; tip: string }
  | { kind: 'failed'; reason: string }

export interface AgentCommits {
  /** The git directory the agent committed into. */
  gitDir: string
  /** The branch there and in the repository (`refs/heads/<branch>` on both sides). */
  branch: string
  /** The branch's tip when the run started, from the sealed record. */
  startTip: string
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/
/** A loose ref is one line; packed-refs lists every ref of the clone (a fresh clone has one). */
const LOOSE_REF_LIMIT = 4096
const PACKED_REFS_LIMIT = 64 * 1024 * 1024

/** A file of the agent's directory that is not what git would have written: the collection fails, saying why. */
class AgentDataError extends Error {}

/**
 * The commit `refs/heads/<branch>` names in the agent's git directory, read as files (the loose ref, else
 * packed-refs); null when the branch is not there.
 */
export function agentBranchTip(gitDir: string, branch: string): string | null {
  const ref = `refs/heads/${branch}`
  const loose = readAgentFile(gitDir, ref, LOOSE_REF_LIMIT)
  if (loose) {
    const text = loose.toString('latin1').trim()
    if (!OID.test(text)) throw new AgentDataError(`${ref} of the agent's git directory is not a commit id`)
    return text
  }
  const packed = readAgentFile(gitDir, 'packed-refs', PACKED_REFS_LIMIT)
  for (const line of packed ? packed.toString('latin1').split('\n') : []) {
    const space = line.indexOf(' ')
    if (line.slice(space + 1) === ref && OID.test(line.slice(0, space))) return line.slice(0, space)
  }
  return null
}

/** The agent's objects as git stores them: loose objects and packs with their index, nothing else. */
function isObjectFile(rel: string): boolean {
  return (
    /^[0-9a-f]{2}\/(?:[0-9a-f]{38}(?:[0-9a-f]{24})?)?$/.test(rel) ||
    rel === 'pack/' ||
    /^pack\/pack-[0-9a-f]{40,64}\.(?:pack|idx)$/.test(rel)
  )
}

/**
 * Brings the agent's commits on `refs/heads/<branch>` of `agent.gitDir` onto the same branch of `repoDir`
 * through a quarantine repository (above), and the worktree's index to the new tip (a mixed reset: the agent's
 * uncommitted files stay as they are). `tempDir`: `.harness/tmp/` of the project.
 */
export async function collectAgentCommits(
  options: {
    repoDir: string
    worktreeDir: string
    id: string
    agent: AgentCommits
    tempDir: string
  } & GitEnvOptions,
): Promise<CollectOutcome> {
  const { agent } = options
  let tip: string | null
  try {
    tip = agentBranchTip(agent.gitDir, agent.branch)
  } catch (error) {
    return failedOf(error)
  }
  if (tip === null || tip === agent.startTip) return { kind: 'none' }
  if (tip.length !== agent.startTip.length)
    return { kind: 'failed', reason: "the agent's branch names no commit of this repository's format" }
  try {
    const fetched = await withTempFolder(options.tempDir, (dir) => quarantine(options, tip, dir))
    if (fetched.kind !== 'fetched') return fetched
    return await landOnBranch(options, fetched.to)
  } catch (error) {
    return failedOf(error)
  }
}

/** The agent's tip fetched into `refs/harness/<id>/container` through a quarantine repository made in `dir`. */
async function quarantine(
  options: Parameters<typeof collectAgentCommits>[0],
  tip: string,
  dir: string,
): Promise<{ kind: 'fetched'; to: string } | CollectOutcome> {
  const { repoDir, id, agent } = options
  const host = gitAt(repoDir, options)
  const q = join(dir, 'quarantine.git')
  const format = agent.startTip.length === 64 ? ['--object-format=sha256'] : []
  await gitAt(dir, options).run(['init', '--quiet', '--bare', ...format, '--', q])
  const commonDir = await host.text(['rev-parse', '--path-format=absolute', '--git-common-dir'])
  writeFileNew(join(q, 'objects', 'info', 'alternates'), `${join(commonDir, 'objects')}\n`)
  copyAgentFiles(join(agent.gitDir, 'objects'), join(q, 'objects'), isObjectFile)
  dropUnpairedPacks(join(q, 'objects', 'pack'))
  const inQuarantine = gitAt(dir, options)
  const type = await inQuarantine.try([`--git-dir=${q}`, 'cat-file', '-t', tip])
  if (type.exitCode !== 0 || type.stdout.trim() !== 'commit') {
    return {
      kind: 'failed',
      reason: `the agent's branch names ${tip.slice(0, 12)}, which is not a commit it made`,
    }
  }
  await inQuarantine.run([`--git-dir=${q}`, 'update-ref', 'refs/heads/collected', tip])
  const ref = `refs/harness/${id}/container`
  const fetched = await host.try([
    '-c',
    'transfer.fsckObjects=true',
    '-c',
    'protocol.file.allow=always',
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    '--no-recurse-submodules',
    '--force',
    '--',
    q,
    `refs/heads/collected:${ref}`,
  ])
  if (fetched.exitCode !== 0) {
    const fault = diskFaultInText(fetched.stderr, repoDir)
    return { kind: 'failed', reason: fault ? fault.message : `git fetch failed: ${gitDetail(fetched)}` }
  }
  return {
    kind: 'fetched',
    to: await host.text(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]),
  }
}

/**
 * The branch moved to `to` only by a fast-forward from the start tip (compare and swap; a branch already there
 * was collected before), then the worktree's index. Not abortable: the two go together.
 */
async function landOnBranch(
  options: Parameters<typeof collectAgentCommits>[0],
  to: string,
): Promise<CollectOutcome> {
  const { repoDir, worktreeDir, id, agent } = options
  const host = gitAt(repoDir, { env: options.env })
  const ref = `refs/harness/${id}/container`
  if (!(await host.check(['merge-base', '--is-ancestor', agent.startTip, to]))) {
    return { kind: 'diverged', ref, tip: to }
  }
  const branch = `refs/heads/${agent.branch}`
  const moved = await host.try([
    'update-ref',
    '-m',
    `harness: commits of session ${id} from its container`,
    branch,
    to,
    agent.startTip,
  ])
  if (moved.exitCode !== 0) {
    const now = await host.try(['rev-parse', '--verify', '--quiet', '--end-of-options', `${branch}^{commit}`])
    if (now.stdout.trim() !== to) {
      return {
        kind: 'failed',
        reason: `the branch ${agent.branch} moved meanwhile: the commits are kept under ${ref}`,
      }
    }
  }
  // The branch moved under the worktree: its index follows (mixed reset), its files are left as they are.
  await gitAt(worktreeDir, { env: options.env }).run(['reset', '--quiet', '--no-refresh'])
  const count = await host.text(['rev-list', '--count', `${agent.startTip}..${to}`])
  await host.run(['update-ref', '-d', ref])
  return { kind: 'fast-forward', from: agent.startTip, to, commits: Number(count) }
}

/** A pack without its index (or an index without its pack) is of no use to git: removed, not guessed at. */
function dropUnpairedPacks(packDir: string): void {
  let names: string[]
  try {
    names = listDir(packDir)
  } catch {
    return
  }
  const present = new Set(names)
  for (const name of names) {
    const twin = name.endsWith('.pack') ? name.replace(/\.pack$/, '.idx') : name.replace(/\.idx$/, '.pack')
    if (!present.has(twin)) unlinkQuiet(join(packDir, name))
  }
}

/** A failure as the record keeps it: the refusal of the door or git's error, never a stack. */
function failedOf(error: unknown): CollectOutcome {
  if ((error as Error | undefined)?.name === 'AbortError') {
    return { kind: 'failed', reason: 'given up: a stop was asked for while collecting' }
  }
  return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) }
}
