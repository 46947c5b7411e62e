import { existingCommits, restoreCheckpoint } from '../git/checkpoint.js'
import { branchTip } from '../git/repo.js'
import type { Checkpoint, SessionRecord } from './record/schema.js'
import type { VerifiedSession } from './record/seal.js'

/*
 * How `session resume` brings back the worktree of a session whose folder is gone (docs/continuity.md,
 * "Resume after the worktree was removed"), decided in one place so that `session path`'s hint says exactly
 * what resume will do.
 */

/** What resume does for a session whose worktree folder is gone. */
export type Recreation =
  /** Check its branch out again; then put back the files of `restore` (the run-end state) when it has one. */
  | { kind: 'branch'; branch: string; restore: Checkpoint | null }
  /** Its branch is gone too: make it again at the checkpoint's HEAD, then put back that checkpoint's files. */
  | { kind: 'checkpoint'; branch: string; checkpoint: Checkpoint & { head: string } }
  /** Nothing to recreate it from; `why` says so in words. */
  | { kind: 'none'; why: string }

/** What git says about a session whose folder is gone: its branch's tip, and which checkpoint commits remain. */
export interface RecreationFacts {
  branchTip: string | null
  presentCommits: ReadonlySet<string>
}

/**
 * The plan (pure): the branch if it is there, with the files of the latest checkpoint when that was taken on
 * the branch's tip (the work left uncommitted when the run ended); else the latest checkpoint whose commit
 * remains. A branch that moved since its latest checkpoint keeps its commits as they are.
 */
export function planRecreation(session: SessionRecord, facts: RecreationFacts): Recreation {
  const branch = session.git_branch
  if (!session.is_worktree || !branch) {
    return { kind: 'none', why: 'it ran in that folder itself (no worktree of its own)' }
  }
  const latest = (session.checkpoints ?? []).reduce<Checkpoint | null>(
    (last, c) => (last === null || c.n > last.n ? c : last),
    null,
  )
  const present = latest !== null && facts.presentCommits.has(latest.commit) ? latest : null
  if (facts.branchTip !== null) {
    return { kind: 'branch', branch, restore: present?.head === facts.branchTip ? present : null }
  }
  if (present && typeof present.head === 'string') {
    return { kind: 'checkpoint', branch, checkpoint: { ...present, head: present.head } }
  }
  return {
    kind: 'none',
    why: `its branch ${branch} is gone too, and no checkpoint of it remains`,
  }
}

/** What a plan does, in words, for `path`'s hint and resume's notice: "… from its branch B (with …)". */
export function describeRecreation(recreation: Recreation): string {
  switch (recreation.kind) {
    case 'branch':
      return `from its branch ${recreation.branch}${recreation.restore ? `, with the files of checkpoint ${recreation.restore.n} (${recreation.restore.trigger ?? 'manual'}, ${recreation.restore.created_at}): the work it left uncommitted` : ''}`
    case 'checkpoint':
      return `and its branch ${recreation.branch} (gone too) from checkpoint ${recreation.checkpoint.n} (${recreation.checkpoint.trigger ?? 'manual'}, ${recreation.checkpoint.created_at})`
    case 'none':
      return recreation.why
  }
}

/** The facts of a verified session, from git in its repository (a read: nothing is changed). */
export async function recreationFacts(
  session: VerifiedSession<SessionRecord>,
  repoDir: string,
  env: NodeJS.ProcessEnv,
): Promise<RecreationFacts> {
  const branch = session.git_branch
  if (!session.is_worktree || !branch) return { branchTip: null, presentCommits: new Set() }
  const commits = (session.checkpoints ?? []).map((c) => c.commit)
  const [tip, present] = await Promise.all([
    branchTip(repoDir, branch, { env }),
    existingCommits(repoDir, commits, { env }),
  ])
  return { branchTip: tip, presentCommits: present }
}

/** Puts the files of `checkpoint` back into a worktree just made from its branch (or its HEAD). */
export async function putBackFiles(
  dir: string,
  checkpoint: Checkpoint,
  options: { env: NodeJS.ProcessEnv; why: string },
): Promise<void> {
  await restoreCheckpoint(dir, checkpoint.commit, {
    env: options.env,
    reflogMessage: `harness: ${options.why} restores checkpoint ${checkpoint.n}`,
  })
}
