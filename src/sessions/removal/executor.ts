import { join } from 'node:path'
import { pathExists, removeEmptyFolder, removeFolderTree, unlinkIfThere } from '../../disk/door.js'
import { SessionNotFoundError } from '../../errors.js'
import type { WorktreeLayout } from '../../git/clean-check.js'
import type { GitEnvOptions } from '../../git/git.js'
import { type RefChange, updateRefs } from '../../git/refs.js'
import { dropRegistrations, removeWorktreeFolder } from '../../git/removal.js'
import { deleteBranch, dropBranchConfig } from '../../git/repo.js'
import { cleanWorktrees, inspectWorktree, removeListedWorktree } from '../../git/worktree.js'
import type { WorktreeInfo } from '../../git/worktree-list.js'
import type { SessionRecord } from '../record/schema.js'
import type { SessionStore } from '../record/store.js'
import { classifyError, type KeepReason, type Verdict } from './decision.js'
import { worktreeContentReasons } from './repo-view.js'
import { type SnapshotPlan, type SnapshotRefs, storeSnapshots } from './snapshots.js'

/**
 * One thing a removal deletes. The executor below is the only code that deletes anything for cleanup, delete,
 * prune and archive: a safety check on a kind of step (containment, ownership) belongs in `runStep`, and a
 * new kind of artefact is a new variant here plus its case there.
 */
export type RemovalStep =
  /** A worktree registered with git (`git worktree remove`; `--force` only when the removal is forced). */
  | { kind: 'worktree'; repo: string; entry: WorktreeInfo }
  /** An empty folder left where a worktree was (removed only while empty). */
  | { kind: 'empty-folder'; path: string }
  /** A local branch, deleted only while it still points at `tip` (else BRANCH_MOVED, kept). */
  | { kind: 'branch'; repo: string; name: string; tip: string; dropConfig: boolean }
  /** A file harness wrote (the session's log); one already gone is fine. */
  | { kind: 'file'; path: string }
  /** A folder harness wrote with everything in it (the agent's own files); one already gone is fine. */
  | { kind: 'folder'; path: string }
  /** Refs under `prefix` (the session's checkpoints), deleted in one transaction; refs already gone are fine. */
  | { kind: 'refs'; repo: string; prefix: string; refs: string[] }

/** What a planner hands over: why it might be kept, what --force snapshots, and what goes, in order. */
export interface RemovalCandidate {
  reasons: KeepReason[]
  /** What --force stores under refs/harness/<name>/ first; null when there is nothing to keep. */
  snapshot: SnapshotPlan | null
  steps: RemovalStep[]
  /**
   * A session's own record: the steps run under its lock, only while the record is still as planned (not
   * resumed, not rewritten), and the record is deleted last, so that an interrupted removal leaves a record
   * pointing at whatever is left.
   */
  record?: SessionRecord
  /** How a change found during the removal is worded (a worktree that became dirty). */
  describe: string
  /**
   * Its worktree's files were not looked at when it was planned (cleanup leaves that to the check under the
   * lock, which is then the only one): what that check finds is worded as planning words it.
   */
  contentUnchecked?: boolean
}

export type RemovalResult =
  | {
      status: 'removed'
      forced: boolean
      snapshot: SnapshotRefs | null
      /** The steps that removed something (under --dry-run: that would). */
      done: RemovalStep[]
    }
  | {
      status: 'kept'
      reasons: KeepReason[]
      snapshot: SnapshotRefs | null
      /** Set when a failure (not a safety rule) stopped the removal. */
      error?: Error
    }
  /** The session's record was deleted by someone else meanwhile: nothing to report. */
  | { status: 'gone' }

export interface ExecutorOptions {
  dryRun: boolean
  /** Needed for candidates that are sessions. */
  store?: SessionStore
  /** The environment git runs with (the caller's, never this process's). */
  env: NodeJS.ProcessEnv
}

/** Carries out a verdict of `decideRemoval` for one candidate. Under dryRun nothing at all is written. */
export async function executeRemoval(
  candidate: RemovalCandidate,
  verdict: Verdict,
  options: ExecutorOptions,
): Promise<RemovalResult> {
  if (verdict.action === 'keep') return { status: 'kept', reasons: candidate.reasons, snapshot: null }
  const { forced } = verdict
  const progress: Progress = { snapshot: null, done: [] }
  try {
    if (options.dryRun) {
      if (forced && candidate.snapshot)
        progress.snapshot = await storeSnapshots(candidate.snapshot, true, options)
      progress.done = candidate.steps.filter(wouldRemove)
      return { status: 'removed', forced, snapshot: progress.snapshot, done: progress.done }
    }
    if (candidate.record) await removeSession(candidate, candidate.record, forced, progress, options)
    else await removeSteps(candidate, forced, progress, options)
  } catch (error) {
    return failedRemoval(error, progress.snapshot)
  }
  return { status: 'removed', forced, snapshot: progress.snapshot, done: progress.done }
}

interface Progress {
  snapshot: SnapshotRefs | null
  done: RemovalStep[]
}

async function removeSession(
  candidate: RemovalCandidate,
  record: SessionRecord,
  forced: boolean,
  progress: Progress,
  options: ExecutorOptions,
): Promise<void> {
  if (!options.store) throw new Error('removing a session needs its store')
  // Everything happens under the record's lock, so a resume cannot start the session halfway through.
  await options.store.delete(record.id, async (current) => {
    if (
      current.status === 'RUNNING' ||
      current.rev !== record.rev ||
      current.updated_at !== record.updated_at
    ) {
      throw new VetoError(changedReason(current))
    }
    await removeSteps(candidate, forced, progress, options)
  })
}

async function removeSteps(
  candidate: RemovalCandidate,
  forced: boolean,
  progress: Progress,
  git: GitEnvOptions,
): Promise<void> {
  if (forced && candidate.snapshot) progress.snapshot = await storeSnapshots(candidate.snapshot, false, git)
  for (const step of candidate.steps) {
    if (await runStep(step, forced, candidate.describe, git)) progress.done.push(step)
  }
}

/** Deletes one step's artefact; false when there was nothing to delete. */
async function runStep(
  step: RemovalStep,
  forced: boolean,
  describe: string,
  git: GitEnvOptions,
): Promise<boolean> {
  switch (step.kind) {
    case 'worktree': {
      const outcome = await removeListedWorktree(step.repo, step.entry, { force: forced, ...git })
      if (outcome === 'dirty') {
        throw new VetoError({
          code: 'DIRTY',
          kind: 'unsafe',
          message: `${describe} changed while it was being removed: it has uncommitted or untracked files`,
        })
      }
      return true
    }
    case 'empty-folder':
      return removeMissingOk(() => removeEmptyFolder(step.path))
    case 'branch':
      return deleteBranch(step.repo, step.name, step.tip, { dropConfig: step.dropConfig, ...git })
    case 'file':
      // Asynchronous: the batched mode deletes many logs at once, and their waits on the file system overlap.
      return unlinkIfThere(step.path)
    case 'refs': {
      const { deleteRefs } = await import('../../git/refs.js')
      await deleteRefs(step.repo, step.prefix, checkpointRefs(step), git)
      return true
    }
    case 'folder':
      if (!pathExists(step.path)) return false
      removeFolderTree(step.path)
      return true
  }
}

/** One candidate and its verdict, for the batched mode. */
export interface RemovalItem {
  candidate: RemovalCandidate
  verdict: Verdict
}

/** How many --force snapshots (each a few git processes) the batched mode takes at once. */
const SNAPSHOT_CONCURRENCY = 4

/**
 * The batched mode of `executeRemoval`, for many sessions at once (cleanup): the same verdicts, the same
 * check of each record under its lock, and the same --force snapshots, but the git work is done once for
 * all of them (docs/design.md, "Removal"): while every record's lock is held, the worktree folders are
 * deleted directly, ONE `git worktree prune` drops their registrations, ONE `git update-ref --stdin`
 * transaction deletes the branches (each only while it still points where it did when planned) and the
 * checkpoint refs; then logs and agent folders, and each record last. If the transaction fails (a branch
 * moved or went), the refs are deleted one session at a time and each failure is that session's own
 * (BRANCH_MOVED: kept). Candidates that are not sessions go through `executeRemoval`. Results are in order.
 */
export async function executeRemovals(
  items: readonly RemovalItem[],
  options: ExecutorOptions,
): Promise<RemovalResult[]> {
  const results: (RemovalResult | undefined)[] = items.map(() => undefined)
  const store = options.store
  const members: BatchMember[] = []
  for (const [index, { candidate, verdict }] of items.entries()) {
    if (options.dryRun || verdict.action === 'keep' || !candidate.record || !store) {
      results[index] = await executeRemoval(candidate, verdict, options)
    } else {
      members.push(new BatchMember(index, candidate, candidate.record, verdict.forced))
    }
  }
  if (store && members.length > 0) {
    const snapshots = new Limiter(SNAPSHOT_CONCURRENCY)
    // Each member holds its record's lock from here until the shared work has been done (or has failed) for
    // it; store.delete then deletes the record, under the same lock, or keeps it if `prepare` threw.
    const settled = members.map((member) =>
      store
        .delete(
          member.record.id,
          async (current) => {
            if (
              current.status === 'RUNNING' ||
              current.rev !== member.record.rev ||
              current.updated_at !== member.record.updated_at
            ) {
              throw new VetoError(changedReason(current))
            }
            const plan = member.candidate.snapshot
            if (member.forced && plan) {
              member.progress.snapshot = await snapshots.run(() => storeSnapshots(plan, false, options))
            }
            member.ready(true)
            const failure = await member.outcome
            if (failure) throw failure
          },
          member.record,
        )
        .then(
          () => member.removed(),
          (error: unknown) => {
            member.ready(false)
            return member.failed(error)
          },
        ),
    )
    const ready = await Promise.all(members.map((member) => member.isReady))
    await removeTogether(
      members.filter((_, i) => ready[i]),
      options,
    )
    for (const [i, result] of (await Promise.all(settled)).entries()) {
      const member = members[i]
      if (member) results[member.index] = result
    }
  }
  return results.map((result) => result ?? { status: 'gone' })
}

/** The shared part of the batched removal; settles every member's `outcome`, whatever happens. */
async function removeTogether(members: BatchMember[], git: GitEnvOptions): Promise<void> {
  try {
    // 0. Planning may be seconds old for a large batch: what was clean then is checked again now that every
    //    record is locked, as `git worktree remove` did for each one before the batched mode (and without
    //    --force it is the only check: planning left it here).
    // 1. Worktree folders (and empty folders left where a worktree was), several members at a time: each
    //    member's as soon as its check has passed, while the others are still being checked.
    const removedByRepo = new Map<string, { paths: string[]; members: BatchMember[] }>()
    const folders = new Limiter(FOLDER_CONCURRENCY)
    const deletions: Promise<void>[] = []
    const underway = new Map<string, Promise<unknown>>()
    try {
      await vetoChangedWorktrees(members, git, (member) => {
        deletions.push(
          folders.run(() => member.attemptAsync(() => removeFoldersOf(member, removedByRepo, underway))),
        )
      })
    } finally {
      // Never settle (release a lock) while a deletion is under way; attemptAsync never rejects.
      await Promise.all(deletions)
    }
    // 2. One prune per repository for their registrations, and 3. one transaction per repository for
    //    branches and checkpoint refs, side by side: neither git command looks at what the other changes
    //    (`update-ref` does not check worktrees), and with every folder gone either order leaves nothing a
    //    second cleanup would not finish. A member whose folders could not be deleted keeps its refs.
    const refsByRepo = new Map<string, BatchMember[]>()
    for (const member of members) {
      if (member.failure) continue
      for (const step of member.candidate.steps) {
        if (step.kind !== 'branch' && step.kind !== 'refs') continue
        const list = refsByRepo.get(step.repo) ?? []
        if (!list.includes(member)) list.push(member)
        refsByRepo.set(step.repo, list)
      }
    }
    const registrations = (async () => {
      for (const [repo, removed] of removedByRepo) {
        try {
          await dropRegistrations(repo, removed.paths, git)
        } catch (error) {
          for (const member of removed.members) member.fail(error)
        }
      }
    })()
    const refs = (async () => {
      for (const [repo, owners] of refsByRepo) await deleteRefsOf(repo, owners, git)
    })()
    await Promise.all([registrations, refs])
    // 4. Logs and the agents' own folders, several members at a time; the records go when each member's
    //    `outcome` settles.
    const files = new Limiter(FOLDER_CONCURRENCY)
    await Promise.all(
      members.map((member) =>
        files.run(() =>
          member.attemptAsync(async () => {
            for (const step of member.candidate.steps) {
              if (step.kind === 'file' || step.kind === 'folder') {
                if (await runStep(step, member.forced, member.candidate.describe, git))
                  member.progress.done.push(step)
              }
            }
          }),
        ),
      ),
    )
  } catch (error) {
    for (const member of members) if (!member.failure) member.fail(error)
  } finally {
    for (const member of members) member.settle()
  }
}

/**
 * Keeps (DIRTY) every unforced member whose worktree gained uncommitted or untracked files since it was
 * planned, or, when planning did not look at its files (`contentUnchecked`), that has any (DIRTY,
 * NESTED_REPO). One batched check per repository; a worktree that needs a closer look (hidden edits,
 * submodules) is inspected on its own. Forced members are covered by the snapshot taken under their lock.
 */
async function vetoChangedWorktrees(
  members: BatchMember[],
  git: GitEnvOptions,
  /** Told of each member whose check has passed (or that needs none), once, as soon as it has. */
  onCleared: (member: BatchMember) => void,
): Promise<void> {
  const { byRepo, unchecked } = worktreesToCheck(members)
  for (const member of members) if (!unchecked.has(member) && !member.failure) onCleared(member)
  // Told once per member, when the last of its worktrees is found clean (a path may be told twice).
  const passed = (member: BatchMember, path: string) => {
    const left = unchecked.get(member)
    if (!left?.delete(path) || left.size > 0) return
    if (!member.failure) onCleared(member)
  }
  for (const [repo, list] of byRepo) await vetoInRepo(repo, list, git, passed)
  // Every member checked has now either passed or been kept; one that did neither is kept, never removed.
  for (const [member, left] of unchecked) {
    if (left.size > 0 && !member.failure) {
      member.keep(new Error(`the worktree check of session ${member.record.id} did not finish`))
    }
  }
}

type WorktreeToCheck = { path: string; member: BatchMember }

/** The unforced members' worktrees to check, by repository, and each member's worktrees still to be found clean. */
function worktreesToCheck(members: BatchMember[]): {
  byRepo: Map<string, WorktreeToCheck[]>
  unchecked: Map<BatchMember, Set<string>>
} {
  const byRepo = new Map<string, WorktreeToCheck[]>()
  const unchecked = new Map<BatchMember, Set<string>>()
  for (const member of members) {
    if (member.forced || member.failure) continue
    for (const step of member.candidate.steps) {
      if (step.kind !== 'worktree') continue
      if (!pathExists(join(step.entry.path, '.git'))) {
        // Planning found a .git here; its files were never looked at: kept as planning would keep it now.
        if (member.candidate.contentUnchecked && pathExists(step.entry.path)) {
          member.keep(
            new VetoError({
              code: 'NOT_A_WORKTREE',
              kind: 'blocked',
              message: `${step.entry.path} has lost its .git file: left alone`,
            }),
          )
        }
        continue
      }
      const list = byRepo.get(step.repo) ?? []
      list.push({ path: step.entry.path, member })
      byRepo.set(step.repo, list)
      unchecked.set(member, (unchecked.get(member) ?? new Set()).add(step.entry.path))
    }
  }
  return { byRepo, unchecked }
}

/** One batched check of a repository's worktrees; each is passed or its members kept. */
async function vetoInRepo(
  repo: string,
  list: WorktreeToCheck[],
  git: GitEnvOptions,
  passed: (member: BatchMember, path: string) => void,
): Promise<void> {
  const layouts = new Map<string, WorktreeLayout>()
  // Two records may name one worktree: each of them is told.
  const owners = new Map<string, BatchMember[]>()
  for (const { path, member } of list) owners.set(path, [...(owners.get(path) ?? []), member])
  let clean: Set<string>
  try {
    clean = await cleanWorktrees(repo, [...owners.keys()], git, layouts, (path) => {
      const layout = layouts.get(path)
      for (const member of owners.get(path) ?? []) {
        if (layout) member.layouts.set(path, layout)
        passed(member, path)
      }
    })
  } catch (error) {
    // Those already found clean are being deleted; the rest are kept.
    for (const { path, member } of list) if (!layouts.has(path)) member.keep(error)
    return
  }
  // Each path once, its answer for every record naming it: an owner that passes starts the deletion.
  for (const [path, named] of owners) {
    if (layouts.has(path)) continue // proven clean in process, and told so already
    if (clean.has(path)) {
      for (const member of named) passed(member, path)
      continue
    }
    await vetoOnCloserLook(path, named, git, passed)
  }
}

/** A worktree the batch could not call clean, inspected on its own: passed, or kept for what it holds. */
async function vetoOnCloserLook(
  path: string,
  named: BatchMember[],
  git: GitEnvOptions,
  passed: (member: BatchMember, path: string) => void,
): Promise<void> {
  let found: { changes: string[]; submodules: string[] }
  try {
    found = await inspectWorktree(path, git)
  } catch (error) {
    for (const member of named) member.keep(error)
    return
  }
  const { changes, submodules } = found
  if (changes.length === 0 && submodules.length === 0) {
    for (const member of named) passed(member, path)
    return
  }
  // The first look at its files (planning left it here): kept for what they hold, worded as planning words it.
  const firstLook = worktreeContentReasons(path, changes, submodules) as [KeepReason, ...KeepReason[]]
  const changed: KeepReason = {
    code: 'DIRTY',
    kind: 'unsafe',
    message: `worktree ${path} changed during the cleanup: it has ${changes.length} uncommitted or untracked ${changes.length === 1 ? 'file' : 'files'}${submodules.length ? ' and checked-out submodules' : ''}`,
  }
  for (const member of named) {
    member.keep(member.candidate.contentUnchecked ? new VetoError(...firstLook) : new VetoError(changed))
  }
}

/** How many worktree folders the batched removal deletes at once (node's thread pool has four threads). */
const FOLDER_CONCURRENCY = 8

/** A member's worktree folders and empty folders, in its steps' order; each removed worktree is noted by repository. */
async function removeFoldersOf(
  member: BatchMember,
  removedByRepo: Map<string, { paths: string[]; members: BatchMember[] }>,
  /** The deletions under way by path: two records naming one worktree wait on one deletion. */
  underway: Map<string, Promise<unknown>>,
): Promise<void> {
  for (const step of member.candidate.steps) {
    if (step.kind === 'worktree') {
      let deletion = underway.get(step.entry.path)
      if (!deletion) {
        deletion = removeWorktreeFolder(step.entry, member.layouts.get(step.entry.path))
        underway.set(step.entry.path, deletion)
      }
      await deletion
      member.progress.done.push(step)
      const repo = removedByRepo.get(step.repo) ?? { paths: [], members: [] }
      repo.paths.push(step.entry.path)
      repo.members.push(member)
      removedByRepo.set(step.repo, repo)
    } else if (step.kind === 'empty-folder') {
      if (removeMissingOk(() => removeEmptyFolder(step.path))) member.progress.done.push(step)
    }
  }
}

/** Branches and checkpoint refs of `owners` in `repo`: one transaction, else one session at a time. */
async function deleteRefsOf(repo: string, owners: BatchMember[], git: GitEnvOptions): Promise<void> {
  const deletions: RefChange[] = []
  for (const member of owners) {
    for (const step of member.candidate.steps) {
      if ((step.kind !== 'branch' && step.kind !== 'refs') || step.repo !== repo) continue
      if (step.kind === 'branch') deletions.push({ delete: `refs/heads/${step.name}`, old: step.tip })
      else if (step.kind === 'refs') {
        for (const ref of checkpointRefs(step)) deletions.push({ delete: ref })
      }
    }
  }
  let together = false
  try {
    together = (await updateRefs(repo, deletions, { ...git, message: 'harness: delete session' })).ok
  } catch {
    // A ref git cannot take on stdin: one at a time says whose it is.
  }
  for (const member of owners) {
    const steps = member.candidate.steps.filter(
      (step) => (step.kind === 'branch' || step.kind === 'refs') && step.repo === repo,
    )
    if (together) {
      // Deleted, whatever happened to the member meanwhile (its prune runs beside this): said so, and the
      // deleted branch's config goes with it, as `git branch -D` would.
      member.progress.done.push(...steps)
      for (const step of steps) {
        if (step.kind === 'branch' && step.dropConfig) {
          await dropBranchConfig(step.repo, step.name, git).catch((error: unknown) => member.fail(error))
        }
      }
      continue
    }
    await member.attemptAsync(async () => {
      for (const step of steps) {
        if (await runStep(step, member.forced, member.candidate.describe, git))
          member.progress.done.push(step)
      }
    })
  }
}

/** One session in the batched mode: its lock is held while `outcome` is pending. */
class BatchMember {
  readonly progress: Progress = { snapshot: null, done: [] }
  /** What each of its worktrees held when proven clean under its lock (deleted by name, then walked). */
  readonly layouts = new Map<string, WorktreeLayout>()
  failure: unknown = null
  readonly isReady: Promise<boolean>
  readonly outcome: Promise<unknown>
  ready: (held: boolean) => void = () => {}
  private settleOutcome: (failure: unknown) => void = () => {}

  constructor(
    readonly index: number,
    readonly candidate: RemovalCandidate,
    readonly record: SessionRecord,
    readonly forced: boolean,
  ) {
    this.isReady = new Promise((resolve) => {
      this.ready = resolve
    })
    this.outcome = new Promise((resolve) => {
      this.settleOutcome = resolve
    })
  }

  fail(error: unknown): void {
    this.failure ??= error
  }

  /**
   * Kept before anything was done under its lock (the check of its worktree): the lock is released now, not
   * when the whole batch is done, so that a resume need not wait for the others.
   */
  keep(error: unknown): void {
    this.fail(error)
    this.settle()
  }

  async attemptAsync(fn: () => Promise<void>): Promise<void> {
    if (this.failure) return
    try {
      await fn()
    } catch (error) {
      this.fail(error)
    }
  }

  settle(): void {
    this.settleOutcome(this.failure)
  }

  removed(): RemovalResult {
    return {
      status: 'removed',
      forced: this.forced,
      snapshot: this.progress.snapshot,
      done: this.progress.done,
    }
  }

  failed(error: unknown): RemovalResult {
    return failedRemoval(error, this.progress.snapshot)
  }
}

/** What a removal that threw comes to, one-by-one or batched: gone, vetoed, or kept for a classified error. */
function failedRemoval(error: unknown, snapshot: Progress['snapshot']): RemovalResult {
  if (error instanceof SessionNotFoundError) return { status: 'gone' }
  if (error instanceof VetoError) return { status: 'kept', reasons: error.reasons, snapshot }
  return {
    status: 'kept',
    reasons: [classifyError(error)],
    snapshot,
    error: error instanceof Error ? error : new Error(String(error)),
  }
}

/** Runs at most `limit` tasks at a time. */
class Limiter {
  private running = 0
  private readonly waiting: (() => void)[] = []

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    this.running++
    try {
      return await task()
    } finally {
      this.running--
      this.waiting.shift()?.()
    }
  }
}

function wouldRemove(step: RemovalStep): boolean {
  switch (step.kind) {
    case 'worktree':
    case 'branch':
    case 'refs':
      return true
    case 'empty-folder':
    case 'file':
    case 'folder':
      return pathExists(step.path)
  }
}

/** A session's checkpoint refs: only those under its own prefix, as names git takes on stdin. */
function checkpointRefs(step: Extract<RemovalStep, { kind: 'refs' }>): string[] {
  return step.refs.filter((ref) => ref.startsWith(step.prefix) && !/[\s\0]/.test(ref) && !ref.includes('..'))
}

function removeMissingOk(remove: () => void): boolean {
  try {
    remove()
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

function changedReason(current: SessionRecord): KeepReason {
  return {
    code: 'SESSION_CHANGED',
    kind: 'blocked',
    message:
      current.status === 'RUNNING'
        ? 'it was resumed meanwhile (now RUNNING)'
        : 'its record changed meanwhile: run the command again',
  }
}

/** Stops a removal under the lock: what was planned is no longer true (kept, with these reasons). */
class VetoError extends Error {
  readonly reasons: KeepReason[]

  constructor(...reasons: [KeepReason, ...KeepReason[]]) {
    super(reasons.map((r) => r.message).join('; '))
    this.reasons = reasons
  }
}
