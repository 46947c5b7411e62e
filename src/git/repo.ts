import { basename, dirname, join, resolve } from 'node:path'
import { IllegalStateError } from '../errors.js'
import { assertRefArg, revParseOrNull, samePath } from './common.js'
import { type Git, type GitEnvOptions, gitAt, gitFailed, hasDotGitAbove } from './git.js'

export type RepoInfo =
  | { isRepo: false }
  | {
      isRepo: true
      /** Top of the worktree that holds cwd (a linked worktree's own top when run inside one). */
      topLevel: string
      /** Top of the main worktree, found through the common git dir; null for a bare repository. */
      mainRoot: string | null
      commonDir: string
      hasCommits: boolean
      /** The commit HEAD points at, null before the first commit. */
      head: string | null
      /** Current branch name (also on an unborn branch), null when HEAD is detached. */
      branch: string | null
      /** cwd relative to topLevel, '' at the top, '/'-separated. */
      relativeCwd: string
    }

/** Where cwd sits in git terms; `{ isRepo: false }` outside a working tree. */
export async function inspectRepo(cwd: string, options: GitEnvOptions): Promise<RepoInfo> {
  // git finds a repository only through a `.git` in this folder or above (the location variables are
  // stripped, see git.ts): without one, no git process needs to say so.
  if (!hasDotGitAbove(cwd)) return { isRepo: false }
  const git = gitAt(cwd, options)
  const where = [
    'rev-parse',
    '--path-format=absolute',
    '--show-toplevel',
    '--git-common-dir',
    '--absolute-git-dir',
    '--show-prefix',
  ]
  // Every `run` starts here: one process for where the repository is, HEAD's commit and HEAD's ref (a branch,
  // or `HEAD` when detached). It fails before the first commit (or outside a repository); only then are the
  // three asked one by one, side by side.
  const all = await git.try([...where, 'HEAD^{commit}', '--symbolic-full-name', 'HEAD'])
  const lines = all.stdout.replace(/\n$/, '').split('\n')
  if (all.exitCode === 0 && lines.length === 6) {
    const ref = lines[5] ?? ''
    return described(
      git,
      lines,
      lines[4] || null,
      ref.startsWith('refs/heads/') ? ref.slice(11) || null : null,
    )
  }
  const [located, head, branch] = await Promise.all([
    git.try(where),
    git.try(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']),
    git.try(['symbolic-ref', '--quiet', '--short', 'HEAD']),
  ])
  if (located.exitCode !== 0) return { isRepo: false }
  return described(
    git,
    located.stdout.replace(/\n$/, '').split('\n'),
    head.exitCode === 0 ? head.stdout.trim() || null : null,
    branch.exitCode === 0 ? branch.stdout.trim() || null : null,
  )
}

/** The RepoInfo of rev-parse's location lines (top, common dir, git dir, prefix), HEAD and its branch. */
async function described(
  git: Git,
  located: string[],
  head: string | null,
  branch: string | null,
): Promise<RepoInfo> {
  const [topLevel = '', commonDir = '', gitDir = '', prefix = ''] = located
  if (!topLevel || !commonDir) return { isRepo: false }
  const mainRoot = await mainRootOf(git.at(topLevel), commonDir, gitDir)
  return {
    isRepo: true,
    topLevel,
    mainRoot,
    commonDir,
    hasCommits: head !== null,
    head,
    branch,
    relativeCwd: prefix.replace(/\/$/, ''),
  }
}

async function mainRootOf(git: Git, commonDir: string, gitDir: string): Promise<string | null> {
  const topLevel = git.cwd
  // In the main worktree its own git dir is the common dir.
  if (samePath(gitDir, commonDir)) return topLevel
  if (basename(commonDir) === '.git') return dirname(commonDir)
  // Submodules record their checkout in core.worktree. A linked worktree of a repository made with
  // --separate-git-dir has no record of the main worktree at all (git's own list shows the git dir).
  const configured = await git.try(['config', '--file', join(commonDir, 'config'), 'core.worktree'])
  const worktree = configured.exitCode === 0 ? configured.stdout.trim() : ''
  return worktree ? resolve(commonDir, worktree) : null
}

export async function branchExists(repo: string, name: string, options: GitEnvOptions): Promise<boolean> {
  return (await branchTip(repo, name, options)) !== null
}

/** The commit a branch points at, or null when there is no such branch. */
export async function branchTip(repo: string, name: string, options: GitEnvOptions): Promise<string | null> {
  assertRefArg(name, 'branch name')
  return revParseOrNull(repo, `refs/heads/${name}^{commit}`, options)
}

/**
 * The one deletion of a local branch, compare-and-delete: deleted only while it still points at
 * `expectedTip` (else BRANCH_MOVED, and it stays), so work made on it meanwhile is never lost. False when it
 * was already gone. `dropConfig` also removes its config section, as `git branch -D` does. Whether the
 * branch is merged is the caller's rule (the removal engine's reasons); a branch checked out in a worktree
 * is the caller's to leave alone (remove the worktree first).
 */
export async function deleteBranch(
  repo: string,
  name: string,
  expectedTip: string,
  options: GitEnvOptions & { dropConfig?: boolean },
): Promise<boolean> {
  assertRefArg(name, 'branch name')
  assertRefArg(expectedTip, 'commit')
  const git = gitAt(repo, options)
  const ref = `refs/heads/${name}`
  const result = await git.try(['update-ref', '-m', 'harness: delete branch', '-d', ref, expectedTip])
  if (result.exitCode !== 0) {
    const now = await revParseOrNull(repo, `${ref}^{commit}`, options)
    if (now === null) return false
    throw new IllegalStateError(
      `branch "${name}" moved to ${now.slice(0, 12)} (expected ${expectedTip.slice(0, 12)}); not deleted`,
      `look at it with "git log ${name}" before deleting it`,
      'BRANCH_MOVED',
    )
  }
  if (options.dropConfig) await dropBranchConfig(repo, name, options)
  return true
}

/** Removes a branch's `[branch "<name>"]` config section (upstream, description), as `git branch -D` does. */
export async function dropBranchConfig(repo: string, name: string, options: GitEnvOptions): Promise<void> {
  assertRefArg(name, 'branch name')
  await gitAt(repo, options).try(['config', '--remove-section', `branch.${name}`])
}

/** When a branch was created, from the oldest entry of its reflog; null when it has no reflog. */
export async function branchCreatedAt(
  repo: string,
  name: string,
  options: GitEnvOptions,
): Promise<Date | null> {
  assertRefArg(name, 'branch name')
  const result = await gitAt(repo, options).try([
    'reflog',
    'show',
    '--date=unix',
    '--format=%gd',
    `refs/heads/${name}`,
    '--',
  ])
  if (result.exitCode !== 0) return null
  const oldest = result.stdout.trim().split('\n').pop() ?? ''
  const seconds = /@\{(\d+)\}$/.exec(oldest)?.[1]
  return seconds ? new Date(Number(seconds) * 1000) : null
}

/** Whether `commit` is reachable from `from` (both commits or full ref names). */
export async function isAncestor(
  repo: string,
  commit: string,
  from: string,
  options: GitEnvOptions,
): Promise<boolean> {
  assertRefArg(commit, 'commit')
  assertRefArg(from, 'revision')
  const args = ['merge-base', '--is-ancestor', commit, from]
  const result = await gitAt(repo, options).try(args)
  if (result.exitCode === 0) return true
  if (result.exitCode === 1) return false
  // An unknown object (e.g. a base commit that was garbage-collected) contains nothing.
  if (/not a valid|bad object|unknown revision|no such/i.test(result.stderr)) return false
  throw gitFailed(args, result)
}

/** How many commits reachable from `tip` none of `excluded` contains (excluded must resolve). */
export async function countCommitsNotIn(
  repo: string,
  tip: string,
  excluded: string[],
  options: GitEnvOptions,
): Promise<number> {
  assertRefArg(tip, 'commit')
  for (const ref of excluded) assertRefArg(ref, 'revision')
  return Number(await gitAt(repo, options).text(['rev-list', '--count', tip, '--not', ...excluded, '--']))
}
