import { assertGitPlace, type GitPlace } from '../git/own-worktree.js'
import type { SessionRecord } from './record/schema.js'
import type { VerifiedSession } from './record/seal.js'

/**
 * The folder git may run in for a verified session, checked now (docs/security.md, "git"): its
 * worktree when that is still a registered worktree of the project's repository whose `.git` names its own
 * registration, or (run with --no-worktree) its folder of the project's checkout. Called again before every
 * write: a `.git` rewritten since the last check is refused (WORKTREE_NOT_OURS, exit 4) and nothing runs.
 */
export async function sessionGitPlace(
  session: VerifiedSession<SessionRecord>,
  env: NodeJS.ProcessEnv,
  projectRoot: string,
): Promise<GitPlace> {
  const place: GitPlace = {
    dir: session.worktree_dir,
    repoDir: session.base_dir ?? projectRoot,
    isWorktree: session.is_worktree !== false,
  }
  await assertGitPlace(place, env)
  return place
}
