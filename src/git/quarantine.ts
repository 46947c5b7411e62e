import { join } from 'node:path'
import { copyAgentFiles, listDir, readAgentFile, unlinkQuiet, writeFileNew } from '../disk/door.js'
import { diskFaultInText } from '../errors.js'
import { type GitEnvOptions, gitAt, gitDetail } from './git.js'
import { restoreSnapshot, withTempFolder, writeWorktreeTree } from './snapshot.js'

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
    return await landOnBranch(options, fetched.to, `refs/harness/${options.id}/container`)
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
  const q = await makeQuarantine(options, dir, agent.startTip)
  copyAgentFiles(join(agent.gitDir, 'objects'), join(q, 'objects'), isObjectFile)
  dropUnpairedPacks(join(q, 'objects', 'pack'))
  // git writes a branch only to a commit it has (else "non-commit object", "nonexistent object").
  const named = await gitAt(dir, options).try([`--git-dir=${q}`, 'update-ref', 'refs/heads/collected', tip])
  if (named.exitCode !== 0) {
    return {
      kind: 'failed',
      reason: `the agent's branch names ${tip.slice(0, 12)}, which is not a commit it made`,
    }
  }
  const ref = `refs/harness/${id}/container`
  const failed = await fetchChecked(repoDir, q, [`refs/heads/collected:${ref}`], options)
  // The ref fetched is the quarantine's branch, which names `tip`.
  return failed ?? { kind: 'fetched', to: tip }
}

/**
 * A quarantine repository made in `dir`: bare, harness's own config, the repository's objects as its alternate
 * (what an agent's objects build on), in the object format of `startTip`.
 */
async function makeQuarantine(options: { repoDir: string } & GitEnvOptions, dir: string, startTip: string) {
  const q = join(dir, 'quarantine.git')
  const format = startTip.length === 64 ? ['--object-format=sha256'] : []
  // Side by side: neither needs the other.
  const [, commonDir] = await Promise.all([
    gitAt(dir, options).run(['init', '--quiet', '--bare', ...format, '--', q]),
    gitAt(options.repoDir, options).text(['rev-parse', '--path-format=absolute', '--git-common-dir']),
  ])
  writeFileNew(join(q, 'objects', 'info', 'alternates'), `${join(commonDir, 'objects')}\n`)
  return q
}

/** `from` (a quarantine, or a bundle in one) fetched with every object checked; a failure as the record keeps it. */
async function fetchChecked(
  into: string,
  from: string,
  refspecs: string[],
  options: GitEnvOptions & { gitDir?: string },
): Promise<CollectOutcome | null> {
  const fetched = await gitAt(into, options).try([
    ...(options.gitDir ? [`--git-dir=${options.gitDir}`] : []),
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
    from,
    ...refspecs,
  ])
  if (fetched.exitCode === 0) return null
  const fault = diskFaultInText(fetched.stderr, into)
  return { kind: 'failed', reason: fault ? fault.message : `git fetch failed: ${gitDetail(fetched)}` }
}

/**
 * The branch moved to `to` only by a fast-forward from the start tip (compare and swap; a branch already there
 * was collected before), then the worktree's index. Not abortable: the two go together.
 */
async function landOnBranch(
  options: {
    repoDir: string
    worktreeDir: string
    id: string
    agent: Omit<AgentCommits, 'gitDir'>
  } & GitEnvOptions,
  to: string,
  ref: string,
): Promise<CollectOutcome> {
  const { repoDir, worktreeDir, id, agent } = options
  const host = gitAt(repoDir, { env: options.env })
  // One walk: the start is an ancestor of `to` exactly when no commit of the start's history is outside `to`'s.
  const [behind, ahead] = (
    await host.text(['rev-list', '--left-right', '--count', `${agent.startTip}...${to}`])
  ).split(/\s+/)
  if (behind !== '0') return { kind: 'diverged', ref, tip: to }
  const branch = `refs/heads/${agent.branch}`
  // The branch moved and the collected ref dropped in one transaction (nothing of it when the branch moved).
  const moved = await host.try(
    ['update-ref', '-m', `harness: commits of session ${id}, collected`, '--stdin'],
    {
      input: `update ${branch} ${to} ${agent.startTip}\ndelete ${ref}\n`,
    },
  )
  if (moved.exitCode !== 0) {
    const now = await host.try(['rev-parse', '--verify', '--quiet', '--end-of-options', `${branch}^{commit}`])
    if (now.stdout.trim() !== to) {
      return {
        kind: 'failed',
        reason: `the branch ${agent.branch} moved meanwhile: the commits are kept under ${ref}`,
      }
    }
    // Collected before (the branch is there already): the ref alone goes.
    await host.run(['update-ref', '-d', ref])
  }
  // The branch moved under the worktree: its index follows (mixed reset), its files are left as they are.
  await gitAt(worktreeDir, { env: options.env }).run(['reset', '--quiet', '--no-refresh'])
  return { kind: 'fast-forward', from: agent.startTip, to, commits: Number(ahead) }
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

/** What a remote job sent back (SPEC §14 `slurm`): a bundle of its commits and of its uncommitted files. */
export interface JobBundle {
  /** The folder the job wrote (its run's spool folder) and the bundle's name in it. */
  runDir: string
  name: string
  branch: string
  /** The branch tip and the worktree's whole tree the job started from, from the sealed record. */
  startTip: string
  startTree: string
  /** What the job says holds its uncommitted files (`refs/harness/uncommitted` in the bundle); null: none. */
  uncommitted: string | null
  /** The job said it sent no commits and no uncommitted files (an empty bundle is no bundle). */
  empty: boolean
}

/** How a job's work came back: its commits (as for a container), and its files in the worktree. */
export type JobCollectOutcome = CollectOutcome & {
  /** applied: the worktree holds the job's files now; kept: they are under `ref` only, and why. */
  files?: 'applied' | 'unchanged' | { kept: string; reason: string }
}

const UNCOMMITTED = 'refs/harness/uncommitted'

/**
 * Brings a job's work back (docs/backends.md, "The Slurm backend"): the bundle, a file the job wrote, is copied
 * through the door (a plain file, never a link or FIFO) into a quarantine repository of harness's own, which
 * fetches from it with every object checked; only the branch and the uncommitted files' ref are taken, by their
 * full names. The repository fetches them from the quarantine (fsck again) under `refs/harness/<id>/`, the branch
 * moves by fast-forward from the run's start only, and the worktree's files become the job's (its uncommitted
 * files, uncommitted again) — only while the worktree is still as the job started from it; otherwise they stay
 * under `refs/harness/<id>/uncommitted` and the collection says so.
 */
export async function collectJobBundle(
  options: {
    repoDir: string
    worktreeDir: string
    id: string
    job: JobBundle
    tempDir: string
  } & GitEnvOptions,
): Promise<JobCollectOutcome> {
  const { job, id } = options
  const agent = { branch: job.branch, startTip: job.startTip }
  let fetched: { tip: string | null; uncommitted: string | null } | CollectOutcome
  try {
    fetched = job.empty
      ? { tip: null, uncommitted: null }
      : await withTempFolder(options.tempDir, (dir) => quarantineBundle(options, dir))
  } catch (error) {
    return failedOf(error)
  }
  if ('kind' in fetched) return fetched
  let commits: CollectOutcome = { kind: 'none' }
  try {
    // Looked at before the branch moves (which resets the worktree's index to the new tip).
    const now = await writeWorktreeTree(options.worktreeDir, { env: options.env, tempDir: options.tempDir })
    if (fetched.tip && fetched.tip !== job.startTip) {
      commits = await landOnBranch({ ...options, agent }, fetched.tip, `refs/harness/${id}/collected`)
    }
    if (commits.kind === 'failed' || commits.kind === 'diverged') return commits
    const target = fetched.uncommitted ?? (commits.kind === 'fast-forward' ? commits.to : job.startTip)
    return { ...commits, files: await applyJobFiles(options, target, now.tree === job.startTree) }
  } catch (error) {
    return failedOf(error)
  }
}

/** The bundle's branch and uncommitted files fetched into the repository through a quarantine made in `dir`. */
async function quarantineBundle(
  options: Parameters<typeof collectJobBundle>[0],
  dir: string,
): Promise<{ tip: string | null; uncommitted: string | null } | CollectOutcome> {
  const { job, id, repoDir } = options
  if (copyAgentFiles(job.runDir, dir, (rel) => rel === job.name) !== 1) {
    return { kind: 'failed', reason: `the job sent no bundle (${job.name} is missing or not a plain file)` }
  }
  const q = await makeQuarantine(options, dir, job.startTip)
  const inQuarantine = gitAt(dir, options)
  const branchRef = `refs/heads/${job.branch}`
  const heads = await inQuarantine.lines([`--git-dir=${q}`, 'bundle', 'list-heads', join(dir, job.name)])
  const named = new Set(heads.map((line) => line.slice(line.indexOf(' ') + 1)))
  const wanted = [branchRef, UNCOMMITTED].filter((ref) => named.has(ref))
  if (wanted.length === 0) return { kind: 'failed', reason: 'the bundle holds neither the branch nor files' }
  const intoQ = wanted.map((ref) => `${ref}:refs/heads/${ref === branchRef ? 'collected' : 'uncommitted'}`)
  const intoQFailed = await fetchChecked(dir, join(dir, job.name), intoQ, { ...options, gitDir: q })
  if (intoQFailed) return intoQFailed
  const tip = named.has(branchRef) ? await commitIn(inQuarantine, q, 'refs/heads/collected') : null
  const uncommitted = named.has(UNCOMMITTED)
    ? await commitIn(inQuarantine, q, 'refs/heads/uncommitted')
    : null
  if ((named.has(branchRef) && !tip) || (named.has(UNCOMMITTED) && !uncommitted)) {
    return { kind: 'failed', reason: "the bundle's refs name no commits" }
  }
  if (uncommitted && uncommitted !== job.uncommitted) {
    return { kind: 'failed', reason: "the bundle's uncommitted files are not the commit the job reported" }
  }
  const refspecs = [
    ...(tip ? [`refs/heads/collected:refs/harness/${id}/collected`] : []),
    ...(uncommitted ? [`refs/heads/uncommitted:refs/harness/${id}/uncommitted`] : []),
  ]
  const failed = await fetchChecked(repoDir, q, refspecs, options)
  return failed ?? { tip, uncommitted }
}

/** The commit a quarantine's ref names, or null when it names something else. */
async function commitIn(git: ReturnType<typeof gitAt>, q: string, ref: string): Promise<string | null> {
  const result = await git.try([
    `--git-dir=${q}`,
    'rev-parse',
    '--verify',
    '--quiet',
    '--end-of-options',
    `${ref}^{commit}`,
  ])
  const oid = result.stdout.trim()
  return result.exitCode === 0 && OID.test(oid) ? oid : null
}

/**
 * The worktree's files made the job's (`target`'s tree: its uncommitted files, or the branch's new tip), the
 * index left at the branch tip: only while the worktree still holds what the job started from. The ref of the
 * uncommitted files is dropped once they are in the worktree (or were there already), kept otherwise.
 */
async function applyJobFiles(
  options: Parameters<typeof collectJobBundle>[0],
  target: string,
  asStarted: boolean,
): Promise<NonNullable<JobCollectOutcome['files']>> {
  const { repoDir, worktreeDir, id, job } = options
  const kept = `refs/harness/${id}/uncommitted`
  const host = gitAt(repoDir, options)
  const targetTree = await host.text(['rev-parse', '--verify', '--end-of-options', `${target}^{tree}`])
  if (targetTree === job.startTree) {
    await host.try(['update-ref', '-d', kept])
    return 'unchanged'
  }
  if (!asStarted) {
    return { kept, reason: 'the worktree changed since the job started: its files were not applied' }
  }
  await restoreSnapshot(worktreeDir, target, { env: options.env, tempDir: options.tempDir })
  await host.try(['update-ref', '-d', kept])
  return 'applied'
}
