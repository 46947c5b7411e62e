import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  createExclusive,
  ensureDir,
  listDir,
  lstatPath,
  makeTempDir,
  readBytes,
  removeFileBelow,
  removeHeldSync,
  unlinkQuiet,
} from '../disk/door.js'
import { diskFaultInText, diskFaultOf, IllegalStateError } from '../errors.js'
import { processExists } from '../process/identity.js'
import { assertFullRefName, assertRefArg, resolveCommit } from './common.js'
import { type Git, type GitEnvOptions, gitAt, gitDetail } from './git.js'
import { parseIndexSummary } from './index-file.js'
import { storeRef } from './refs.js'
import { stageWorktree } from './stage.js'
import { hiddenChanges } from './worktree.js'

export interface WorktreeTree {
  /** The tree object of the working tree as `git add -A` would see it. */
  tree: string
  /** HEAD of that worktree, null before its first commit. */
  head: string | null
  /** Top directory of that worktree. */
  topLevel: string
}

export interface WorktreeState extends WorktreeTree {
  /** Tree of HEAD, null before the first commit. */
  headTree: string | null
  /** Tree of the worktree's real index (read from a copy), null when there is none or it holds conflicts. */
  indexTree: string | null
}

interface Located {
  topLevel: string
  indexPath: string
  head: string | null
  headTree: string | null
}

/** Top directory, index path, HEAD and its tree in one `rev-parse` (two calls before the first commit). */
async function locate(worktreeDir: string, options: GitEnvOptions): Promise<Located> {
  const base = ['rev-parse', '--path-format=absolute', '--show-toplevel', '--git-path', 'index']
  const git = gitAt(worktreeDir, options)
  const all = await git.try([...base, 'HEAD', 'HEAD^{tree}'])
  const lines = all.stdout.split('\n')
  if (all.exitCode === 0 && lines.length >= 4) {
    return {
      topLevel: lines[0] ?? '',
      indexPath: lines[1] ?? '',
      head: lines[2] ?? null,
      headTree: lines[3] ?? null,
    }
  }
  // No HEAD yet (or rev-parse refused): where the worktree is still has to be known.
  const [topLevel = '', indexPath = ''] = (await git.run(base)).stdout.split('\n')
  return { topLevel, indexPath, head: null, headTree: null }
}

/**
 * Writes the working tree's files (tracked and untracked, ignored ones excluded) as a tree object, through a
 * temporary index: the worktree's own index, HEAD and branch are not touched. Blobs of untracked files become
 * loose objects in the repository; unreferenced ones are pruned by git's gc as usual.
 */
export async function writeWorktreeTree(worktreeDir: string, options: GitEnvOptions): Promise<WorktreeTree> {
  const { tree, head, topLevel } = await readWorktreeState(worktreeDir, options, false)
  return { tree, head, topLevel }
}

/**
 * `writeWorktreeTree` plus the trees of HEAD and of the real index, in as few git calls as it takes (see
 * docs/development/design.md, "Checkpoints"): one `rev-parse`, then on a copy of the index `write-tree` (the
 * index's tree) beside `ls-files -v` (hidden edits), `add -A` and `write-tree`.
 */
export async function readWorktreeState(
  worktreeDir: string,
  options: GitEnvOptions,
  withIndexTree = true,
): Promise<WorktreeState> {
  const { topLevel, indexPath, head, headTree } = await locate(worktreeDir, options)
  // Read once: the copy and what is known about it come from the same bytes, however the agent writes.
  const realIndex = readIfPresent(indexPath)
  const summary = realIndex && head ? parseIndexSummary(realIndex, head.length / 2) : null
  return withTempIndex(gitAt(topLevel, options), options.tempDir, async (git, indexFile) => {
    const seed = async (fromRealIndex: boolean) => {
      unlinkQuiet(indexFile)
      // Seeding from a copy of the real index keeps its stat data (no re-hashing of every file) and its
      // sparse-checkout bits; HEAD is the fallback when there is no index or the copy is not usable.
      if (fromRealIndex && realIndex) createExclusive(indexFile, realIndex)
      else if (head) await git.run(['read-tree', head])
    }
    await seed(realIndex !== null)
    // While the copy still equals the real index, its tree is the index's (null: none, or conflicts); a valid
    // cache-tree already names it. Edits hidden behind assume-unchanged/skip-worktree flags copied with the
    // index are looked for only when some entry carries such a flag.
    const [indexTree, hidden] = await Promise.all([
      !withIndexTree || !realIndex || summary?.conflicted
        ? null
        : summary?.rootTree
          ? summary.rootTree
          : git
              .try(['write-tree'])
              .then((written) => (written.exitCode === 0 ? written.stdout.trim() : null)),
      realIndex && (summary === null || summary.flagged) ? hiddenChanges(topLevel, options) : [],
    ])
    // Clear those flags in the private index so that `add -A` stores the files as they are.
    // One flag per call: update-index applies only the last of several mark options to --stdin paths.
    for (const flag of hidden.length > 0 ? ['--no-assume-unchanged', '--no-skip-worktree'] : []) {
      await git.run(['update-index', flag, '-z', '--stdin'], { input: `${hidden.join('\0')}\0` })
    }
    const oidBytes = head ? head.length / 2 : 20
    let added = await stageWorktree(git, indexFile, oidBytes)
    if (added.exitCode !== 0 && realIndex !== null) {
      await seed(false)
      added = await stageWorktree(git, indexFile, oidBytes)
    }
    if (added.exitCode !== 0) {
      const fault = diskFaultInText(added.stderr, topLevel)
      if (fault) throw fault
      throw new IllegalStateError(
        `could not snapshot ${topLevel}: ${gitDetail(added)}`,
        'check the file named above (permissions?)',
        'SNAPSHOT_FAILED',
      )
    }
    const tree = await git.text(['write-tree'])
    return { tree, head, topLevel, headTree, indexTree }
  })
}

const INDEX_PREFIX = 'index-'

/** `tempDir` made (0700) if missing, refused if it is not a plain folder, swept of dead processes' indexes. */
function ownTempDir(tempDir: string): string {
  ensureDir(tempDir)
  if (!lstatPath(tempDir).isDirectory()) {
    throw new IllegalStateError(
      `${tempDir} is not a folder: harness never follows links in its own folders`,
      'replace it with a real folder (its target is left alone)',
      'SYMLINK_REFUSED',
    )
  }
  for (const name of listDir(tempDir)) {
    const pid = Number(/^index-(\d+)-/.exec(name)?.[1])
    if (!pid || pid === process.pid || processExists(pid)) continue
    removeHeldSync(join(tempDir, name))
  }
  return tempDir
}

function readIfPresent(path: string): Buffer | null {
  try {
    return readBytes(path, 'gitIndex')
  } catch {
    return null
  }
}

/**
 * Runs `body` with `git` bound to a temporary index file (GIT_INDEX_FILE), removed afterwards (see
 * `withTempFolder`). The index lists file names, which may be sensitive: it lives in a private folder.
 */
async function withTempIndex<T>(
  git: Git,
  tempDir: string | undefined,
  body: (indexed: Git, indexFile: string) => Promise<T>,
): Promise<T> {
  return withTempFolder(tempDir, (dir) => {
    const indexFile = join(dir, 'index')
    return body(git.with({ GIT_INDEX_FILE: indexFile }), indexFile)
  })
}

/**
 * Runs `body` with a private temporary folder (0700), removed afterwards. Under `tempDir` (`.harness/tmp/`) it is
 * named after this process, so the next command removes one a SIGKILL left behind (its process gone); never a
 * symlinked `tmp`. The first thing written there shows a full disk: it is a DiskFaultError.
 */
export async function withTempFolder<T>(
  tempDir: string | undefined,
  body: (dir: string) => Promise<T>,
): Promise<T> {
  let dir: string
  try {
    dir = tempDir
      ? makeTempDir(`${INDEX_PREFIX}${process.pid}-`, ownTempDir(tempDir))
      : makeTempDir('harness-index-')
  } catch (error) {
    throw diskFaultOf(error, tempDir ?? tmpdir())
  }
  try {
    return await body(dir)
  } catch (error) {
    throw diskFaultOf(error, dir)
  } finally {
    removeHeldSync(dir)
  }
}

export interface SnapshotOptions extends GitEnvOptions {
  worktreeDir: string
  /** Full ref to store the commit under, e.g. refs/harness/<id>/checkpoints/3. */
  ref: string
  message: string
  /** Parent commit; default the worktree's HEAD (none before its first commit). */
  parent?: string
  /** Replace an existing ref; by default an existing ref is an error so no snapshot is ever lost. */
  overwrite?: boolean
}

export interface Snapshot {
  commit: string
  ref: string
  tree: string
}

/** Stores the whole working tree (untracked files included, ignored ones not) as a commit under `ref`. */
export async function snapshotWorktree(options: SnapshotOptions): Promise<Snapshot> {
  await assertFullRefName(options.worktreeDir, options.ref, options)
  const { tree, head, topLevel } = await writeWorktreeTree(options.worktreeDir, options)
  const parent = options.parent !== undefined ? await resolveCommit(topLevel, options.parent, options) : head
  const commit = await commitTree(topLevel, tree, parent ? [parent] : [], options.message, options)
  await storeRef(topLevel, options.ref, commit, options.message, options)
  return { commit, ref: options.ref, tree }
}

/** Stores the commit `target` names (e.g. a branch tip) under `ref`, so it outlives the branch. */
export async function snapshotRef(
  repo: string,
  ref: string,
  target: string,
  options: GitEnvOptions & { overwrite?: boolean; message?: string },
): Promise<Snapshot> {
  await assertFullRefName(repo, ref, options)
  const commit = await resolveCommit(repo, target, options)
  await storeRef(repo, ref, commit, options.message ?? `harness: keep ${target}`, options)
  const tree = await gitAt(repo, options).text(['rev-parse', `${commit}^{tree}`])
  return { commit, ref, tree }
}

export async function commitTree(
  cwd: string,
  tree: string,
  parents: string[],
  message: string,
  options: GitEnvOptions,
): Promise<string> {
  const args = [
    'commit-tree',
    '--no-gpg-sign',
    tree,
    ...parents.flatMap((parent) => ['-p', parent]),
    '-F',
    '-',
  ]
  const git = gitAt(cwd, options)
  const first = await git.try(args, { input: message })
  if (first.exitCode === 0) return first.stdout.trim()
  // Only when git has no identity to sign with does the fallback cost its look-ups.
  return git.with(await identityEnv(cwd, options)).text(args, { input: message })
}

/** A snapshot must not fail for want of user.name/user.email: fall back to a harness identity. */
export async function identityEnv(cwd: string, options: GitEnvOptions): Promise<NodeJS.ProcessEnv> {
  const [author, committer] = await Promise.all(
    ['GIT_AUTHOR_IDENT', 'GIT_COMMITTER_IDENT'].map((v) => gitAt(cwd, options).try(['var', v])),
  )
  const fallback: NodeJS.ProcessEnv = {}
  if (author?.exitCode !== 0)
    Object.assign(fallback, { GIT_AUTHOR_NAME: 'harness', GIT_AUTHOR_EMAIL: 'harness@localhost' })
  if (committer?.exitCode !== 0) {
    Object.assign(fallback, { GIT_COMMITTER_NAME: 'harness', GIT_COMMITTER_EMAIL: 'harness@localhost' })
  }
  return fallback
}

export interface RestoreResult {
  /** Files written from the snapshot. */
  written: number
  /** Files deleted because the snapshot does not have them. */
  removed: string[]
  /** Paths the snapshot does not have that were left alone (nested repositories, paths beyond a link). */
  kept: string[]
}

/**
 * Makes the working tree's files equal to the snapshot's tree without moving HEAD or the branch and without
 * touching the worktree's index: tracked and untracked-not-ignored files that the snapshot lacks are deleted,
 * every file of the snapshot is written. Ignored files stay, except where a snapshot file needs their place.
 * Callers take a snapshot of the current state first.
 */
export async function restoreSnapshot(
  worktreeDir: string,
  commit: string,
  options: GitEnvOptions,
): Promise<RestoreResult> {
  assertRefArg(commit, 'snapshot')
  const topLevel = await gitAt(worktreeDir, options).text(['rev-parse', '--show-toplevel'])
  const git = gitAt(topLevel, options)
  const target = await resolveCommit(topLevel, commit, options)
  const [wanted, present] = await Promise.all([
    git.fields(['ls-tree', '-r', '-z', '--name-only', '--full-tree', target]),
    git.fields(['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--full-name']),
  ])
  const wantedSet = new Set(wanted)
  const result: RestoreResult = { written: wantedSet.size, removed: [], kept: [] }
  for (const path of new Set(present)) {
    if (wantedSet.has(path)) continue
    // Relative to the worktree as opened, never through a link: a tracked folder that is now a link (the user's,
    // or one an agent planted) leads outside the worktree, and what is there is not the worktree's to delete.
    const removed = removeFileBelow(topLevel, path)
    if (removed === 'removed') result.removed.push(path)
    else if (removed !== 'absent') result.kept.push(path)
  }
  await withTempIndex(git, options.tempDir, async (indexed) => {
    await indexed.run(['read-tree', target])
    await indexed.run(['checkout-index', '--all', '--force'])
  })
  result.removed.sort()
  return result
}
