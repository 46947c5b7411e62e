import { dirname, join, relative, resolve, sep } from 'node:path'
import { entryExists, lstatOrNull, readText, realPath } from '../disk/door.js'
import { IllegalStateError } from '../errors.js'
import { gitCommonDir } from './git.js'

/**
 * Where git may run for a session (docs/security.md, "git"): the project's repository itself, or a
 * linked worktree of it whose `.git` is a plain file naming `<common>/worktrees/<name>`, whose `gitdir` names
 * that file back. Anything else (a `.git` folder or link planted in the worktree, a `.git` file pointing at the
 * main repository or at another one, a nested repository between a folder and the project's top) is refused
 * before git runs there, so git never reads another repository's config, hooks or filters.
 */
export interface GitPlace {
  /** The session's folder: a linked worktree, or (`is_worktree: false`) a folder of the project itself. */
  dir: string
  /** The project's repository (its main worktree). */
  repoDir: string
  isWorktree: boolean
}

export class NotOurWorktreeError extends IllegalStateError {
  constructor(dir: string, why: string) {
    super(
      `${dir} is not a worktree of this repository that harness may use: ${why}`,
      'harness runs no git there; check the folder, then "harness session recover --scan"',
      'WORKTREE_NOT_OURS',
    )
  }
}

/** Throws NotOurWorktreeError unless git may run in `place.dir` (checked again before every write). */
export async function assertGitPlace(place: GitPlace, env: NodeJS.ProcessEnv): Promise<void> {
  const why = await gitPlaceProblem(place, env)
  if (why) throw new NotOurWorktreeError(place.dir, why)
}

/** Why git may not run in `place.dir`, or null. */
async function gitPlaceProblem(place: GitPlace, env: NodeJS.ProcessEnv): Promise<string | null> {
  const repo = real(place.repoDir)
  if (!repo) return `its repository ${place.repoDir} is gone`
  const mainGit = lstatOrNull(join(repo, '.git'))
  if (!mainGit?.isDirectory()) return `${repo} holds no .git folder`
  const common = await gitCommonDir(repo, env)
  if (!common || real(common) !== real(join(repo, '.git'))) return `${repo} is not the top of its repository`
  return place.isWorktree
    ? linkedWorktreeProblem(place.dir, real(common) as string)
    : insideRepoProblem(place.dir, repo)
}

/** A linked worktree whose `.git` file names `<common>/worktrees/<name>`, and that registration names it back. */
function linkedWorktreeProblem(dir: string, common: string): string | null {
  const dotGit = join(dir, '.git')
  const stat = lstatOrNull(dotGit)
  if (!stat) return 'it has no .git file'
  if (!stat.isFile())
    return `its .git is a ${stat.isDirectory() ? 'folder' : 'link or special file'}, not a worktree's .git file`
  if (stat.size > 4096) return 'its .git file is not a worktree link'
  const named = /^gitdir: (.+)$/m.exec(readText(dotGit, 'small'))?.[1]?.trim()
  if (!named) return 'its .git file names no git folder'
  const admin = real(resolve(dir, named))
  if (!admin || dirname(admin) !== join(common, 'worktrees')) {
    return `its .git names ${named}, not a registration under ${join(common, 'worktrees')}`
  }
  let back: string
  try {
    back = readText(join(admin, 'gitdir'), 'small').trim()
  } catch {
    return `its registration ${admin} has no gitdir file`
  }
  if (real(resolve(admin, back)) !== real(dotGit))
    return `its registration ${admin} names ${back}, not this folder`
  return null
}

/** A folder of the project's own checkout: under its top, with no other repository in between. */
function insideRepoProblem(dir: string, repo: string): string | null {
  const folder = real(dir)
  if (!folder) return 'it is gone'
  if (folder !== repo && !folder.startsWith(repo + sep)) return `it is outside the repository ${repo}`
  const parts = relative(repo, folder).split(sep).filter(Boolean)
  for (let depth = parts.length; depth > 0; depth--) {
    const here = join(repo, ...parts.slice(0, depth))
    if (entryExists(join(here, '.git'))) return `${here} holds a repository of its own`
  }
  return null
}

function real(path: string): string | null {
  try {
    return realPath(path)
  } catch {
    return null
  }
}
