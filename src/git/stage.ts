import { readBytes } from '../disk/door.js'
import type { Git, GitResult } from './git.js'
import { indexGitlinks } from './index-file.js'
import { STAGE_PATHSPECS } from './rules.js'

/**
 * The one `git add -A` (rules.ts): every file of the worktree into the index `git` is bound to (tracked,
 * modified, deleted, untracked but not ignored), as `git add -A` would, without going into a nested
 * repository. `git add` runs `git status` inside each checked-out gitlink whatever config it is given, and that
 * status reads the nested repository's own config: its clean filters and fsmonitor, which an agent may have
 * written. So the gitlinks already in the index are left out of `add` (pathspecs on stdin) and brought up to date
 * by `update-index`, which records a nested repository's HEAD without running anything in it; new nested
 * repositories are added by `add` as gitlinks (their HEAD read, nothing run).
 */
export async function stageWorktree(
  git: Git,
  indexFile: string,
  oidBytes: number,
): Promise<GitResult & { error?: Error }> {
  const gitlinks = await gitlinksIn(git, indexFile, oidBytes)
  const pathspecs = ['.', ...gitlinks.map((path) => `:(exclude,literal,top)${path}`)]
  const added = await git.try(['add', '-A', STAGE_PATHSPECS, '--pathspec-file-nul'], {
    input: `${pathspecs.join('\0')}\0`,
  })
  if (added.exitCode !== 0 || gitlinks.length === 0) return added
  return git.try(['update-index', '--add', '--remove', '-z', '--stdin'], {
    input: `${gitlinks.join('\0')}\0`,
  })
}

/** The gitlinks of the index file, read in process; git is asked when the reader cannot say (version 4). */
async function gitlinksIn(git: Git, indexFile: string, oidBytes: number): Promise<string[]> {
  let buffer: Buffer | null = null
  try {
    buffer = readBytes(indexFile, 'gitIndex')
  } catch {} // no index yet: nothing is tracked
  if (buffer === null) return []
  const read = indexGitlinks(buffer, oidBytes)
  if (read) return read
  const gitlinks: string[] = []
  for (const line of (await git.run(['ls-files', '--stage', '-z'])).stdout.split('\0')) {
    const match = /^160000 [0-9a-f]+ \d\t(.*)$/s.exec(line)
    if (match?.[1] !== undefined) gitlinks.push(match[1])
  }
  return gitlinks
}
