import { basename, dirname, join, resolve } from 'node:path'
import { ExternalToolError, IllegalStateError } from '../errors.js'
import {
  assertBranchName,
  assertRefArg,
  type GitEnvOptions,
  gitDetail,
  resolveCommit,
  revParseOrNull,
  run,
  samePath,
} from './common.js'
import { hasDotGitAbove } from './git.js'
import { listWorktrees } from './worktree-list.js'

export { resolveCommit } from './common.js'

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
  // HEAD and its branch are asked at the same time as where the repository is (outside one they just fail):
  // every `run` starts here.
  const [located, head, branch] = await Promise.all([
    run(
      [
        'rev-parse',
        '--path-format=absolute',
        '--show-toplevel',
        '--git-common-dir',
        '--absolute-git-dir',
        '--show-prefix',
      ],
      cwd,
      { ...options, allowFailure: true },
    ),
    run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], cwd, { ...options, allowFailure: true }),
    run(['symbolic-ref', '--quiet', '--short', 'HEAD'], cwd, { ...options, allowFailure: true }),
  ])
  if (located.exitCode !== 0) return { isRepo: false }
  const [topLevel = '', commonDir = '', gitDir = '', prefix = ''] = located.stdout
    .replace(/\n$/, '')
    .split('\n')
  if (!topLevel || !commonDir) return { isRepo: false }
  const mainRoot = await mainRootOf(topLevel, commonDir, gitDir, options)
  const headCommit = head.exitCode === 0 ? head.stdout.trim() : null
  return {
    isRepo: true,
    topLevel,
    mainRoot,
    commonDir,
    hasCommits: headCommit !== null,
    head: headCommit,
    branch: branch.exitCode === 0 ? branch.stdout.trim() || null : null,
    relativeCwd: prefix.replace(/\/$/, ''),
  }
}

async function mainRootOf(
  topLevel: string,
  commonDir: string,
  gitDir: string,
  options: GitEnvOptions,
): Promise<string | null> {
  // In the main worktree its own git dir is the common dir.
  if (samePath(gitDir, commonDir)) return topLevel
  if (basename(commonDir) === '.git') return dirname(commonDir)
  // Submodules record their checkout in core.worktree. A linked worktree of a repository made with
  // --separate-git-dir has no record of the main worktree at all (git's own list shows the git dir).
  const configured = await run(['config', '--file', join(commonDir, 'config'), 'core.worktree'], topLevel, {
    ...options,
    allowFailure: true,
  })
  const worktree = configured.exitCode === 0 ? configured.stdout.trim() : ''
  return worktree ? resolve(commonDir, worktree) : null
}

export async function branchExists(repo: string, name: string, options: GitEnvOptions): Promise<boolean> {
  assertRefArg(name, 'branch name')
  const result = await run(['show-ref', '--verify', '--quiet', `refs/heads/${name}`], repo, {
    ...options,
    allowFailure: true,
  })
  if (result.exitCode === 0) return true
  if (result.exitCode === 1) return false
  throw new ExternalToolError(`git show-ref failed: ${gitDetail(result)}`, undefined, 'GIT_FAILED')
}

/** The commit a branch points at, or null when there is no such branch. */
export async function branchTip(repo: string, name: string, options: GitEnvOptions): Promise<string | null> {
  assertRefArg(name, 'branch name')
  return revParseOrNull(repo, `refs/heads/${name}^{commit}`, options)
}

export interface BranchInfo {
  /** Short name, e.g. harness/3f9a12c8. */
  name: string
  commit: string
}

/**
 * Local branches matching a for-each-ref pattern under refs/heads/, sorted by name: `harness/*` matches one
 * level (session branches), a plain prefix such as `harness` matches everything below it.
 */
export async function listBranches(
  repo: string,
  pattern = 'harness/*',
  options: GitEnvOptions,
): Promise<BranchInfo[]> {
  const result = await run(
    ['for-each-ref', '--format=%(objectname) %(refname:strip=2)', `refs/heads/${pattern}`],
    repo,
    options,
  )
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const space = line.indexOf(' ')
      return { commit: line.slice(0, space), name: line.slice(space + 1) }
    })
}

export interface DeleteBranchOptions extends GitEnvOptions {
  /** Delete even when git does not consider it merged (`git branch -D`). */
  force?: boolean
  /** Delete only if the branch still points here (compare-and-delete), whatever `force` says. */
  expectedTip?: string
}

/**
 * Deletes a local branch; false when there was none. Without `force` git's own rule applies (merged into
 * its upstream or the current HEAD); harness's rule ("merged into its base") is `isMergedInto`, checked by
 * the caller before asking for `force`.
 */
export async function deleteBranch(
  repo: string,
  name: string,
  options: DeleteBranchOptions,
): Promise<boolean> {
  await assertBranchName(repo, name, options)
  const tip = await branchTip(repo, name, options)
  if (tip === null) return false
  const holder = (await listWorktrees(repo, options)).find((worktree) => worktree.branch === name)
  if (holder) {
    throw new IllegalStateError(
      `branch "${name}" is checked out in ${holder.path}`,
      'remove that worktree first',
      'BRANCH_CHECKED_OUT',
    )
  }
  if (options.expectedTip !== undefined) {
    assertRefArg(options.expectedTip, 'commit')
    const result = await run(
      ['update-ref', '-m', 'harness: delete branch', '-d', `refs/heads/${name}`, options.expectedTip],
      repo,
      { ...options, allowFailure: true },
    )
    if (result.exitCode !== 0) {
      throw new IllegalStateError(
        `branch "${name}" moved to ${tip.slice(0, 12)} (expected ${options.expectedTip.slice(0, 12)}); not deleted`,
        'look at it with "git log" before deleting it',
        'BRANCH_MOVED',
      )
    }
    // `git branch -D` also drops the branch's config section; mirror that.
    await run(['config', '--remove-section', `branch.${name}`], repo, { ...options, allowFailure: true })
    return true
  }
  const result = await run(['branch', options.force ? '-D' : '-d', '--end-of-options', name], repo, {
    ...options,
    allowFailure: true,
  })
  if (result.exitCode === 0) return true
  const detail = gitDetail(result)
  if (/not fully merged/.test(result.stderr)) {
    throw new IllegalStateError(`branch "${name}" is not fully merged`, undefined, 'BRANCH_NOT_MERGED')
  }
  throw new ExternalToolError(`git branch failed: ${detail}`, undefined, 'GIT_FAILED')
}

export interface UnmergedCommits {
  /** Commits reachable from the branch and not from the base. */
  count: number
  /** Newest first, at most `limit` of them. */
  commits: { sha: string; subject: string }[]
}

/** Commits on `branch` that `base` (a commit or a branch name) does not contain. */
export async function unmergedCommits(
  repo: string,
  branch: string,
  base: string,
  options: GitEnvOptions & { limit?: number },
): Promise<UnmergedCommits> {
  const [tip, baseCommit] = await Promise.all([
    resolveCommit(repo, branch, options),
    resolveCommit(repo, base, options),
  ])
  const range = [tip, '--not', baseCommit]
  const count = Number((await run(['rev-list', '--count', ...range], repo, options)).stdout.trim())
  if (count === 0) return { count, commits: [] }
  const log = await run(
    [
      'log',
      '--no-color',
      '--no-show-signature',
      `--max-count=${options.limit ?? 20}`,
      '--format=%H %s',
      ...range,
    ],
    repo,
    options,
  )
  const commits = log.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const space = line.indexOf(' ')
      return space < 0
        ? { sha: line, subject: '' }
        : { sha: line.slice(0, space), subject: line.slice(space + 1) }
    })
  return { count, commits }
}

/**
 * The first of `targets` whose history contains the branch's tip (every commit of the branch is reachable
 * from it), or null. Targets that do not resolve (a deleted branch) are skipped. Squash merges and rebases
 * are not recognised: such a branch counts as unmerged, which errs on the side of keeping work.
 */
export async function mergedInto(
  repo: string,
  branch: string,
  targets: string[],
  options: GitEnvOptions,
): Promise<string | null> {
  const tip = await resolveCommit(repo, branch, options)
  for (const target of targets) {
    assertRefArg(target, 'revision')
    const resolved = await revParseOrNull(repo, `${target}^{commit}`, options)
    if (resolved === null) continue
    const ancestor = await run(['merge-base', '--is-ancestor', tip, resolved], repo, {
      ...options,
      allowFailure: true,
    })
    if (ancestor.exitCode === 0) return target
    if (ancestor.exitCode !== 1) {
      throw new ExternalToolError(`git merge-base failed: ${gitDetail(ancestor)}`, undefined, 'GIT_FAILED')
    }
  }
  return null
}

export async function isMergedInto(
  repo: string,
  branch: string,
  targets: string[],
  options: GitEnvOptions,
): Promise<boolean> {
  return (await mergedInto(repo, branch, targets, options)) !== null
}
