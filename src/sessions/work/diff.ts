import { join } from 'node:path'
import { pathExists } from '../../disk/door.js'
import { IllegalStateError } from '../../errors.js'
import type { DiffMode } from '../../git/diff.js'
import { diffReport } from '../../git/diff.js'
import { assertGitPlace } from '../../git/own-worktree.js'
import { branchExists } from '../../git/repo.js'
import { readerOf, refuseWhileRunning } from '../backends/index.js'
import type { SessionEnv } from '../ports.js'
import { getSession } from '../query/query.js'
import type { SessionRecord } from '../record/schema.js'
import { type VerifiedSession, verifiedSession } from '../record/seal.js'

export interface SessionDiff {
  id: string
  base_commit: string
  /** `worktree`: committed, uncommitted and untracked (not ignored) files; `branch`: the worktree is gone. */
  source: 'worktree' | 'branch'
  /** Changed paths, sorted. */
  files: string[]
  /** The patch (default mode). */
  diff?: string
  /** `git diff --stat` (with --stat). */
  stat?: string
  /** The worktree that was compared, or (source `branch`) the one that is gone. */
  worktree: string | null
  branch: string | null
  /** False: the session ran in a folder of its own choosing, which others may have changed too. */
  is_worktree: boolean
}

/**
 * `harness session diff`: what the session changed against its base_commit. From the worktree when it exists
 * (commits, uncommitted edits and untracked files, through a temporary index); else from its branch.
 */
export async function diffSession(ctx: SessionEnv, input: string, mode: DiffMode): Promise<SessionDiff> {
  // A foreign record may name any folder (an embedded repository with textconv, a nested .git with an
  // fsmonitor): it is shown by show/list, and diff runs no git for it (docs/security.md, "git").
  const session = verifiedSession(await getSession(ctx, input), 'runs git where it points')
  const id = session.id
  // A backend whose agent works elsewhere has nothing here to diff while it runs (docs/backends.md).
  if (session.status === 'RUNNING' || session.unsettled) {
    refuseWhileRunning(await readerOf(session), 'diff')
  }
  const base = session.base_commit
  if (!base) {
    throw new IllegalStateError(
      `session "${id}" has no base commit: it did not run in a git repository with commits`,
      undefined,
      'NOTHING_TO_DIFF',
    )
  }
  const paths = await ctx.project()
  const repoDir = session.base_dir ?? paths.root
  const { worktree, branch } = await diffSources(ctx, session, repoDir)
  if (!worktree && !branch) {
    throw new IllegalStateError(
      `session "${id}" has nothing to diff: its worktree ${session.worktree_dir} and its branch ${session.git_branch ?? '(none)'} are both gone`,
      undefined,
      'NOTHING_TO_DIFF',
    )
  }
  const report = await diffReport({
    repoDir: worktree ?? repoDir,
    worktreeDir: worktree,
    branch,
    base,
    mode,
    env: ctx.env,
    tempDir: join(paths.harnessDir, 'tmp'),
  })
  return {
    id,
    base_commit: report.base,
    source: report.source,
    files: report.files,
    ...(mode === 'patch' ? { diff: report.text } : mode === 'stat' ? { stat: report.text } : {}),
    worktree: worktree ?? (session.is_worktree === false ? null : session.worktree_dir),
    branch: session.git_branch ?? null,
    is_worktree: session.is_worktree !== false,
  }
}

/**
 * What a session's changes can be read from, for diff and export: its worktree while it is one, else its
 * branch while that exists (either may be undefined).
 */
export async function diffSources(
  ctx: SessionEnv,
  session: VerifiedSession<SessionRecord>,
  repoDir: string,
): Promise<{ worktree: string | undefined; branch: string | undefined }> {
  // Without its .git file a folder is no longer a worktree: git would report on an enclosing repository.
  const worktree =
    pathExists(session.worktree_dir) && pathExists(join(session.worktree_dir, '.git'))
      ? session.worktree_dir
      : undefined
  // git runs only in the project's repository and in a worktree whose .git names its own registration.
  await assertGitPlace(
    {
      dir: worktree ?? repoDir,
      repoDir,
      isWorktree: worktree !== undefined && session.is_worktree !== false,
    },
    ctx.env,
  )
  const branch =
    session.git_branch &&
    pathExists(repoDir) &&
    (await branchExists(repoDir, session.git_branch, { env: ctx.env }))
      ? session.git_branch
      : undefined
  return { worktree, branch }
}
