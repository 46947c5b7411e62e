import { join } from 'node:path'
import { pathExists } from '../../disk/door.js'
import type { WorktreeLayout } from '../../git/clean-check.js'
import type { GitEnvOptions } from '../../git/git.js'
import { cleanWorktrees, inspectWorktree } from '../../git/worktree.js'
import { type BatchMember, VetoError } from './candidate.js'
import type { KeepReason } from './decision.js'
import { worktreeContentReasons } from './repo-view.js'

/**
 * Keeps (DIRTY) every unforced member whose worktree gained uncommitted or untracked files since it was
 * planned, or, when planning did not look at its files (`contentUnchecked`), that has any (DIRTY,
 * NESTED_REPO). One batched check per repository; a worktree that needs a closer look (hidden edits,
 * submodules) is inspected on its own. Forced members are covered by the snapshot taken under their lock.
 */
export async function vetoChangedWorktrees(
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
