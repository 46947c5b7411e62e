import { join } from 'node:path'
import { pathExists } from '../../disk/door.js'
import { type ErrorCode, IllegalStateError, shellWord, UsageError } from '../../errors.js'
import type { GitEnvOptions } from '../../git/git.js'
import type { MainWorktree, PendingWork } from '../../git/merge.js'
import * as git from '../../git/merge.js'
import { countCommitsNotIn, branchTip as tipOf } from '../../git/repo.js'
import { commitTree } from '../../git/snapshot.js'
import { backendOf } from '../backends/index.js'
import { actEnv, settleSession } from '../backends/settle.js'
import { sessionGitPlace } from '../git-place.js'
import type { SessionEnv } from '../ports.js'
import { getSession, seen } from '../query/query.js'
import type { SessionRecord } from '../record/schema.js'
import { assertSealed, type VerifiedSession } from '../record/seal.js'
import { assertNotRunning } from './checkpoints.js'

export type MergeStrategy = 'merge' | 'squash' | 'rebase'

export interface MergeOptions {
  squash?: boolean
  rebase?: boolean
  dryRun?: boolean
  /**
   * Message of the commit of uncommitted work (default: the task's first line and the session id); under
   * --squash, the message of the squashed commit on the base branch instead.
   */
  message?: string
}

/** Why a merge is refused (exit 4); under --dry-run they are listed instead. */
export interface MergeRefusal {
  code: ErrorCode
  message: string
  hint?: string
}

export interface MergeResult {
  id: string
  dry_run: boolean
  strategy: MergeStrategy
  branch: string
  base_branch: string
  main_worktree: string
  /** `merged`, `up-to-date` (the base already holds everything), or under --dry-run: `would-merge`/`refused`. */
  outcome: 'merged' | 'up-to-date' | 'would-merge' | 'refused'
  /** The -m given, if any (the dry run's "run it:" line repeats it). */
  message: string | null
  /** Files of uncommitted work that are (or would be) committed on the session's branch first. */
  uncommitted: string[]
  /**
   * Commits of the session's branch (with the commit of the uncommitted work, when there is some) that the base
   * does not hold; after an earlier merge, only those made since.
   */
  commits: number
  conflicts: string[]
  refusals: MergeRefusal[]
  merge_commit: string | null
  merged_at: string | null
}

/** A merge refused for a reason that --dry-run would have listed: exit 4. */
class MergeRefusedError extends IllegalStateError {
  constructor(refusal: MergeRefusal, details?: string[]) {
    super(refusal.message, refusal.hint, refusal.code)
    if (details) this.details = details
  }
}

/** The first line of a session's task, for commit messages. */
function taskLine(session: SessionRecord): string {
  const line = taskOf(session)
    .split('\n')
    .find((l) => l.trim() !== '')
  return line?.trim() || `work of session ${session.id}`
}

/**
 * `harness session merge <id>`: commits the worktree's uncommitted work on the session's branch, then lands the
 * branch on its base branch in the main worktree (merge commit, `--squash` or `--rebase`). Refused while the
 * session runs, when the main worktree has tracked changes or is on another branch, and on conflicts (which
 * are found before anything is touched). See docs/continuity.md.
 */
export async function mergeSession(
  ctx: SessionEnv,
  input: string,
  options: MergeOptions,
): Promise<MergeResult> {
  if (options.squash && options.rebase) throw new UsageError('choose one of --squash and --rebase')
  const strategy: MergeStrategy = options.squash ? 'squash' : options.rebase ? 'rebase' : 'merge'
  let session = await getSession(ctx, input, options.dryRun)
  if (session.unsettled && !options.dryRun) {
    // Its run ended unrecorded: settled first (the work collected onto its branch), then merged.
    const store = await ctx.store()
    const record = store.get(session.id)
    if (record) {
      const env = actEnv(store, ctx.processes, ...seen(ctx))
      session = await settleSession(await backendOf(record), record, env)
    }
  }
  const id = session.id
  assertNotRunning(session, 'merge')
  const verified = assertSealed(session)
  const branch = session.git_branch
  if (!session.is_worktree || !branch) {
    throw new IllegalStateError(
      `session "${id}" has no branch to merge: it ran without a worktree`,
      undefined,
      'NO_BRANCH',
    )
  }
  const place = await mergePlace(ctx, verified, branch, strategy)
  const { git, repo, base, baseTip, gitOptions } = place
  const refusals = await mainRefusals(place)
  const work = await sessionWork(ctx, place, options, refusals)
  const { tip, landedBefore } = work
  const [commits, check] = await Promise.all([
    countCommitsNotIn(repo, tip, landedBefore ? [baseTip, landedBefore] : [baseTip], gitOptions),
    git.checkMerge(repo, baseTip, tip, gitOptions),
  ])
  const result: MergeResult = {
    id,
    dry_run: options.dryRun === true,
    strategy,
    branch,
    base_branch: base,
    main_worktree: place.main.path,
    outcome: 'merged',
    message: work.given,
    uncommitted: work.pending?.files ?? [],
    commits,
    conflicts: check.conflicts,
    refusals,
    merge_commit: null,
    merged_at: null,
  }
  if (landedBefore && tip === landedBefore) {
    if (options.dryRun) return { ...result, outcome: 'refused' }
    throw new MergeRefusedError(refusals[0] as MergeRefusal)
  }
  if (commits === 0) return { ...result, outcome: 'up-to-date' }
  if (check.conflicts.length) {
    refusals.push({
      code: 'MERGE_CONFLICT',
      message: `merging session "${id}" into "${base}" would conflict in ${listed(check.conflicts)}`,
      hint: `nothing was changed; resolve it in the session (harness session resume ${id}) or merge by hand`,
    })
  }
  if (options.dryRun) return { ...result, outcome: refusals.length ? 'refused' : 'would-merge' }
  const [first] = refusals
  if (first) throw new MergeRefusedError(first, first.code === 'MERGE_CONFLICT' ? check.conflicts : undefined)
  return landMerge(ctx, place, work, result)
}

/** Where a merge happens: the repository, its main worktree, the base branch and both tips. */
interface MergePlace {
  session: VerifiedSession<SessionRecord>
  id: string
  strategy: MergeStrategy
  branch: string
  base: string
  repo: string
  main: MainWorktree
  baseTip: string
  branchTip: string
  git: typeof git
  gitOptions: GitEnvOptions & { tempDir: string }
}

async function mergePlace(
  ctx: SessionEnv,
  session: VerifiedSession<SessionRecord>,
  branch: string,
  strategy: MergeStrategy,
): Promise<MergePlace> {
  const id = session.id
  const project = await ctx.project()
  // Temporary indexes under `.harness/tmp/`, never in $TMPDIR.
  const gitOptions = { env: ctx.env, tempDir: join(project.harnessDir, 'tmp') }
  const repo = session.base_dir ?? project.root
  const base = baseBranchOf(session)
  const [main, baseTip, branchTip] = await Promise.all([
    git.mainWorktree(repo, gitOptions),
    tipOf(repo, base, gitOptions),
    tipOf(repo, branch, gitOptions),
  ])
  if (!branchTip) {
    throw new IllegalStateError(
      `the branch "${branch}" of session "${id}" is gone`,
      undefined,
      'BRANCH_MISSING',
    )
  }
  if (!baseTip) {
    throw new IllegalStateError(
      `the base "${base}" of session "${id}" is not a local branch`,
      `recreate it, or merge "${branch}" with git yourself`,
      'BASE_MISSING',
    )
  }
  return { session, id, strategy, branch, base, repo, main, baseTip, branchTip, git, gitOptions }
}

/** The main worktree must be on the base branch, without tracked changes. */
async function mainRefusals({ main, base, git, gitOptions }: MergePlace): Promise<MergeRefusal[]> {
  const refusals: MergeRefusal[] = []
  if (main.branch !== base) {
    refusals.push({
      code: 'WRONG_BRANCH',
      message: `the main worktree ${main.path} is on ${main.branch ? `branch "${main.branch}"` : 'a detached HEAD'}, not on the session's base branch "${base}"`,
      hint: `switch it first: git -C ${shellWord(main.path)} switch ${shellWord(base)}`,
    })
  }
  const dirty = await git.trackedChanges(main.path, gitOptions)
  if (dirty.length) {
    refusals.push({
      code: 'MAIN_DIRTY',
      message: `the main worktree ${main.path} has uncommitted changes (${listed(dirty)})`,
      hint: 'commit or stash them first',
    })
  }
  return refusals
}

/** The session's work to land: its uncommitted work, the tip that would land, what landed before. */
interface SessionWork {
  hasWorktree: boolean
  /** The -m given, if any. */
  given: string | null
  /** The message of the commit of uncommitted work. */
  message: string
  pending: PendingWork | null
  tip: string
  landedBefore: string | null
}

/** Reads the session's worktree (once its `.git` is known to be its own) and adds what refuses the merge there. */
async function sessionWork(
  ctx: SessionEnv,
  place: MergePlace,
  options: MergeOptions,
  refusals: MergeRefusal[],
): Promise<SessionWork> {
  const { session, id, branch, strategy, git, gitOptions } = place
  const worktree = session.worktree_dir
  const hasWorktree = pathExists(join(worktree, '.git'))
  // Its .git must name its own registration before git reads or commits there (else: the main index).
  if (hasWorktree) await sessionGitPlace(session, ctx.env, place.repo)
  const given = options.message?.trim() || null
  const defaultMessage = `${taskLine(session)} (harness session ${id})`
  // Under --squash the user's message names the one commit that lands on the base branch.
  const message = (strategy !== 'squash' && given) || defaultMessage
  const pending = hasWorktree ? await git.pendingWork(worktree, message, gitOptions) : null
  if (pending && pending.head !== place.branchTip) {
    refusals.push({
      code: 'BRANCH_MOVED',
      message: `the worktree of session "${id}" is not on its branch "${branch}"`,
      hint: `git -C ${worktree} switch ${branch}`,
    })
  }
  if (strategy === 'rebase' && !hasWorktree) {
    refusals.push({
      code: 'WORKTREE_MISSING',
      message: `--rebase replays the branch in the session's worktree, which is gone: ${worktree}`,
      hint: `"harness session resume ${id}" recreates it, or merge without --rebase`,
    })
  }
  const tip = pending?.commit ?? place.branchTip
  // A session merged before is not merged again unless it has work since (docs/continuity.md).
  const landedBefore = session.merged_at && session.merged_head ? session.merged_head : null
  if (landedBefore && tip === landedBefore) {
    refusals.unshift({
      code: 'ALREADY_MERGED',
      message: `session "${id}" was already merged into "${place.base}" (${session.merged_at}, commit ${String(session.merge_commit).slice(0, 12)}) and has no work since`,
      hint: `resume it for more work, then merge again: harness session resume ${id}`,
    })
  }
  return { hasWorktree, given, message, pending, tip, landedBefore }
}

/** Commits the pending work, lands the branch on the base branch (fast-forward of the main worktree), records it. */
async function landMerge(
  ctx: SessionEnv,
  place: MergePlace,
  work: SessionWork,
  result: MergeResult,
): Promise<MergeResult> {
  const { session, id, strategy, git, gitOptions, repo, baseTip } = place
  const { pending, tip } = work
  const worktree = session.worktree_dir
  if (work.hasWorktree) await sessionGitPlace(session, ctx.env, repo)
  if (pending) await git.commitPendingWork(worktree, pending, work.message, gitOptions)
  let landed: string
  if (strategy === 'rebase') {
    const rebased = await git.rebaseOnto(worktree, baseTip, gitOptions)
    if (!rebased.ok) {
      throw new MergeRefusedError(
        {
          code: 'MERGE_CONFLICT',
          message: `replaying session "${id}" onto "${place.base}" conflicts in ${listed(rebased.conflicts)}`,
          hint: 'the rebase was aborted and the main worktree not touched; merge without --rebase, or resolve it in the session',
        },
        rebased.conflicts,
      )
    }
    landed = rebased.head
  } else {
    const merged = await git.checkMerge(repo, baseTip, tip, gitOptions)
    landed =
      strategy === 'squash'
        ? await commitTree(repo, merged.tree, [baseTip], work.given ?? squashMessage(session), gitOptions)
        : await commitTree(
            repo,
            merged.tree,
            [baseTip, tip],
            `Merge harness session ${id} (${place.branch}): ${taskLine(session)}`,
            gitOptions,
          )
  }
  await git.fastForward(place.main.path, landed, `harness: merge session ${id}`, gitOptions)
  const mergedAt = new Date(ctx.clock.now()).toISOString()
  const store = await ctx.store()
  // The branch tip that was landed: cleanup treats the branch as merged while it still points there (a squash
  // commit does not contain the branch's commits).
  const mergedHead = strategy === 'rebase' ? landed : tip
  await store.update(id, (current) => ({
    ...current,
    merged_at: mergedAt,
    merge_commit: landed,
    merged_head: mergedHead,
  }))
  return { ...result, merge_commit: landed, merged_at: mergedAt }
}

/** The branch a session was started from: its recorded base_ref when that names a local branch. */
function baseBranchOf(session: SessionRecord): string {
  const ref = typeof session.base_ref === 'string' ? session.base_ref.replace(/^refs\/heads\//, '') : ''
  if (!ref || /^[0-9a-f]{40}$/.test(ref) || ref === 'HEAD') {
    throw new IllegalStateError(
      `session "${session.id}" was not started from a branch, so it has no base branch to merge into`,
      `merge its branch "${session.git_branch}" with git yourself`,
      'NO_BASE_BRANCH',
    )
  }
  return ref
}

/** The session's prompt; for an `exec` session, its command. */
function taskOf(session: SessionRecord): string {
  if (session.prompt) return session.prompt
  return Array.isArray(session.extra_args) ? session.extra_args.join(' ') : ''
}

function squashMessage(session: SessionRecord): string {
  const task = taskOf(session).trim() || `work of session ${session.id}`
  return `${task}\n\n(harness session ${session.id}, squashed)`
}

function listed(paths: string[]): string {
  const shown = paths.slice(0, 5).join(', ')
  return `${paths.length} ${paths.length === 1 ? 'file' : 'files'}: ${shown}${paths.length > 5 ? ', …' : ''}`
}
