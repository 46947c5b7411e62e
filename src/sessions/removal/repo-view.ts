import { isAbsolute, join, relative } from 'node:path'
import { pathExists } from '../../disk/door.js'
import { HarnessError } from '../../errors.js'
import { canonicalPath } from '../../git/common.js'
import type { GitEnvOptions } from '../../git/git.js'
import { branchesMergedInto, onSomeBranch, type RemovalState, readRemovalState } from '../../git/removal.js'
import { countCommitsNotIn } from '../../git/repo.js'
import { cleanWorktrees, inspectWorktree } from '../../git/worktree.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import type { KeepReason } from './decision.js'

/**
 * One repository as the removal planners see it: read once, with merge answers cached per target. It only
 * asks git (through src/git/) and turns the answers into reasons; it never changes anything.
 */
export class RepoView {
  private readonly merged = new Map<string, Promise<Set<string>>>()
  private byPath: Map<string, WorktreeInfo> | undefined
  /** Worktrees found clean by `checkClean`, asked about many at once. */
  private readonly clean = new Set<string>()

  constructor(
    readonly state: RemovalState,
    /** The directory harness runs in: a worktree that holds it is not pulled from under the user's shell. */
    private readonly cwd: string,
    /** The environment git runs with (the session's, never this process's). */
    readonly git: GitEnvOptions,
  ) {}

  get dir(): string {
    return this.state.repo
  }

  /**
   * The registered worktree at `path`, by real path. Like the listing it searches, the answer is read once:
   * each worktree's real path is resolved once and kept (for `holdsCwd` too), and so is each path looked up.
   */
  worktreeAt(path: string): WorktreeInfo | undefined {
    if (!this.byPath) {
      this.byPath = new Map()
      for (const w of this.state.worktrees) {
        const canonical = canonicalPath(w.path)
        this.canonicalOf.set(w, canonical)
        this.byPath.set(canonical, w)
      }
    }
    if (this.lookedUp.has(path)) return this.lookedUp.get(path)
    const found = this.byPath.get(canonicalPath(path))
    this.lookedUp.set(path, found)
    return found
  }

  private readonly canonicalOf = new Map<WorktreeInfo, string>()
  private readonly lookedUp = new Map<string, WorktreeInfo | undefined>()

  private byBranch: Map<string, WorktreeInfo[]> | undefined

  /** The worktree other than `except` that has `branch` checked out. */
  holderOf(branch: string, except?: WorktreeInfo): WorktreeInfo | undefined {
    // Asked once per session: the listing is indexed by branch once, not searched each time.
    if (!this.byBranch) {
      this.byBranch = new Map()
      for (const w of this.state.worktrees) {
        if (w.branch) this.byBranch.set(w.branch, [...(this.byBranch.get(w.branch) ?? []), w])
      }
    }
    return this.byBranch.get(branch)?.find((w) => w !== except)
  }

  private mergedInto(target: string): Promise<Set<string>> {
    let set = this.merged.get(target)
    if (!set) {
      set = branchesMergedInto(this.dir, target, this.git)
      this.merged.set(target, set)
    }
    return set
  }

  /** The first of `targets` that contains every commit of `branch`, as a short name; null if none does. */
  async mergedTarget(branch: string, targets: string[]): Promise<string | null> {
    for (const target of targets) if ((await this.mergedInto(target)).has(branch)) return shortRef(target)
    return null
  }

  /** UNMERGED: `name` (at `tip`) has commits that none of `targets` (nor `base`) contains. */
  async unmergedReason(name: string, tip: string, targets: string[], base?: string): Promise<KeepReason> {
    const into = targets.map(shortRef)
    let count: number | null = null
    try {
      count = await countCommitsNotIn(this.dir, tip, [...targets, ...(base ? [base] : [])], this.git)
    } catch {
      // A base commit that is gone: the count is unknown, the branch is unmerged all the same.
    }
    const commits = count === null ? 'commits' : `${count} ${count === 1 ? 'commit' : 'commits'}`
    return {
      code: 'UNMERGED',
      kind: 'unsafe',
      message: `branch ${name} has ${commits} not merged into ${into.length ? into.join(' or ') : 'any base branch'}`,
    }
  }

  /**
   * Asks git about many worktrees at once (`cleanWorktrees`), so that `worktreeReasons` need not ask about
   * each clean one on its own. Only worktrees that `worktreeReasons` would inspect are asked about.
   */
  async checkClean(entries: WorktreeInfo[]): Promise<void> {
    const paths = entries
      .filter((e) => !e.isMain && !e.locked && !this.holdsCwd(e) && pathExists(join(e.path, '.git')))
      .map((e) => e.path)
    for (const path of await cleanWorktrees(this.dir, paths, this.git)) this.clean.add(path)
  }

  private canonicalCwd: string | undefined

  private holdsCwd(entry: WorktreeInfo): boolean {
    // The current directory is resolved once per repository, not once per worktree asked about.
    this.canonicalCwd ??= canonicalPath(this.cwd)
    const rel = relative(this.canonicalOf.get(entry) ?? canonicalPath(entry.path), this.canonicalCwd)
    return !rel.startsWith('..') && !isAbsolute(rel)
  }

  /** Worktree and branch facts that make removing it lose work, as reasons. */
  async worktreeReasons(entry: WorktreeInfo, branchTip: string | undefined): Promise<KeepReason[]> {
    const found = await this.reasonsBeforeContent(entry, branchTip)
    if (found) return found
    return [...(await this.contentReasons(entry.path)), ...(await this.detachedReasons(entry, branchTip))]
  }

  /**
   * The reasons found without looking at the worktree's files (main, locked, gone, holding the current
   * directory, no `.git`); null when its files must be looked at: `contentReasons`, then `detachedReasons`.
   */
  async reasonsBeforeContent(
    entry: WorktreeInfo,
    branchTip: string | undefined,
  ): Promise<KeepReason[] | null> {
    if (entry.isMain) {
      return [{ code: 'MAIN_WORKTREE', kind: 'blocked', message: `${entry.path} is the main worktree` }]
    }
    // A locked worktree may live on a device that is not mounted right now: never removed.
    if (entry.locked) {
      return [
        {
          code: 'LOCKED',
          kind: 'blocked',
          message: `worktree ${entry.path} is locked${entry.lockedReason ? ` (${entry.lockedReason})` : ''}: unlock it with "git worktree unlock"`,
        },
      ]
    }
    // Only its registration is left, but that may be all that keeps a detached HEAD's commits reachable.
    if (!pathExists(entry.path)) return this.detachedReasons(entry, branchTip)
    if (this.holdsCwd(entry)) {
      return [
        {
          code: 'CURRENT_DIRECTORY',
          kind: 'blocked',
          message: `worktree ${entry.path} holds the current directory: run the command from elsewhere`,
        },
      ]
    }
    if (!pathExists(join(entry.path, '.git'))) {
      // git would look upwards and report on the enclosing repository instead.
      return [
        {
          code: 'NOT_A_WORKTREE',
          kind: 'blocked',
          message: `${entry.path} has lost its .git file: left alone`,
        },
      ]
    }
    return null
  }

  /** What the worktree's files hold that its removal would lose (DIRTY, NESTED_REPO), as reasons. */
  async contentReasons(path: string): Promise<KeepReason[]> {
    if (this.clean.has(path)) return []
    const { changes, submodules } = await inspectWorktree(path, this.git)
    return worktreeContentReasons(path, changes, submodules)
  }

  /** DETACHED_HEAD: the worktree's detached HEAD is on no branch (its registration may be all that keeps it). */
  async detachedReasons(entry: WorktreeInfo, branchTip: string | undefined): Promise<KeepReason[]> {
    if (!entry.detached || !entry.head || entry.head === branchTip) return []
    if (await onSomeBranch(this.dir, entry.head, this.git)) return []
    return [
      {
        code: 'DETACHED_HEAD',
        kind: 'unsafe',
        message: `worktree ${entry.path} has a detached HEAD (${entry.head.slice(0, 12)}) that no branch contains`,
      },
    ]
  }
}

/**
 * The reasons a worktree's files give to keep it, from `inspectWorktree`'s answer: a nested repository
 * (untracked, or a checked-out submodule) keeps its files and commits in its own git dir, which no snapshot of
 * this worktree can hold (NESTED_REPO: never removed, even with --force; without --force git refuses such a
 * worktree too, and the batched removal deletes folders directly); uncommitted or untracked files (DIRTY).
 * Planning and the batched removal's check under the lock word them alike.
 */
export function worktreeContentReasons(path: string, changes: string[], submodules: string[]): KeepReason[] {
  const reasons: KeepReason[] = []
  const nested = changes
    .filter((e) => e.startsWith('?? ') && e.endsWith('/'))
    .map((e) => e.slice(3, -1))
    .filter((folder) => pathExists(join(path, folder, '.git')))
  nested.push(...submodules)
  if (nested.length > 0) {
    reasons.push({
      code: 'NESTED_REPO',
      kind: 'blocked',
      message: `worktree ${path} holds ${nested.length === 1 ? 'a git repository' : 'git repositories'} (${nested.join(', ')}) whose work a snapshot cannot keep: move ${nested.length === 1 ? 'it' : 'them'} out first`,
    })
  }
  if (changes.length > 0) {
    reasons.push({
      code: 'DIRTY',
      kind: 'unsafe',
      message: `worktree ${path} has ${changes.length} uncommitted or untracked ${changes.length === 1 ? 'file' : 'files'}`,
    })
  }
  return reasons
}

export function shortRef(ref: string): string {
  return ref.replace(/^refs\/(heads|remotes)\//, '')
}

/** Reads repositories once each; null for a folder that is gone or not a repository. */
export class RepoCache {
  private readonly repos = new Map<string, Promise<RepoView | null>>()

  constructor(
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /** Starts reading `dir` now, for a `get` later; a failure then is that `get`'s. */
  prefetch(dir: string): void {
    this.get(dir).catch(() => {})
  }

  get(dir: string): Promise<RepoView | null> {
    const key = canonicalPath(dir)
    let repo = this.repos.get(key)
    if (!repo) {
      repo = openRepo(dir, this.cwd, { env: this.env })
      this.repos.set(key, repo)
    }
    return repo
  }
}

async function openRepo(dir: string, cwd: string, git: GitEnvOptions): Promise<RepoView | null> {
  if (!pathExists(dir)) return null
  try {
    return new RepoView(await readRemovalState(dir, git), cwd, git)
  } catch (error) {
    if (error instanceof HarnessError && error.code === 'GIT_FAILED') return null
    throw error
  }
}
