import { join, relative, sep } from 'node:path'

/**
 * What a container sees of this machine, and what it may write: decided here and nowhere else, for every mode
 * of a container run (a worktree session's start, resume, interactive or `--tmux` run; a `--no-worktree` run in
 * or outside a repository). docs/backends.md, "Mounts", is this table in words; test/unit/sessions/backends/
 * mounts.test.ts holds it row by row, and test/e2e/container-boundary.test.ts checks from inside a real
 * container that each path is as writable as it says.
 *
 * Every path is mounted at the same path inside. A read-only mount that a writable one contains is itself a
 * mount point, and so is every folder on the way to it that the agent could write (the private clone's folder):
 * a mount point cannot be renamed or replaced from inside, so the agent cannot move a read-only file aside and
 * write its own in its place (renaming a mount point's parent is allowed, renaming the mount point is not).
 */
export interface Mount {
  /** The path inside, and on the host unless `source` says otherwise. */
  path: string
  source?: string
  mode: 'ro' | 'rw'
  why: string
}

export interface MountInput {
  /** The agent's folder: the session's worktree, or the user's folder for `--no-worktree`. */
  folder: string
  /** `.harness` of the project, and the session's per-agent folder in it. */
  harnessDir: string
  agentDir: string
  /** A worktree session: the repository's git directory (common dir) and the private clone made for the run. */
  worktree: { commonDir: string; cloneFolder: string; gitDir: string; pointerFile: string } | null
  /** `--no-worktree` inside a repository: that checkout's `.git` (a folder, or a linked worktree's file) and common dir. */
  checkout: { dotGit: string; commonDir: string } | null
}

/** Whether `path` is `folder` or lies inside it. */
function within(folder: string, path: string): boolean {
  const rel = relative(folder, path)
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..')
}

/** The mounts of one container run, parents before the mounts they contain. */
export function containerMounts(input: MountInput): Mount[] {
  const { folder, harnessDir, agentDir, worktree, checkout } = input
  const mounts: Mount[] = [
    { path: folder, mode: 'rw', why: "the agent's working folder" },
    {
      path: agentDir,
      mode: 'rw',
      why: "per-agent state (HOME inside): an agent CLI's own files survive into a resume",
    },
  ]
  if (worktree) {
    const { commonDir, cloneFolder, gitDir, pointerFile } = worktree
    mounts.push(
      {
        path: commonDir,
        mode: 'ro',
        why: "the repository's git directory: its objects, read by the private clone",
      },
      {
        path: cloneFolder,
        mode: 'ro',
        why: 'holds the private clone: a mount point, so it cannot be renamed aside',
      },
      { path: gitDir, mode: 'rw', why: 'the private clone the agent commits into' },
      { path: join(gitDir, 'config'), mode: 'ro', why: "the clone's config is harness's" },
      { path: join(gitDir, 'hooks'), mode: 'ro', why: "the clone's hooks (none) are harness's" },
      {
        path: join(folder, '.git'),
        source: pointerFile,
        mode: 'ro',
        why: "masks the worktree's .git: git inside uses the private clone",
      },
    )
  }
  // The user's own checkout, when the agent's folder holds its .git: never writable from inside (hooks, refs,
  // config); a linked checkout's repository with it, so that git inside works, read-only.
  if (checkout && within(folder, checkout.dotGit)) {
    mounts.push({ path: checkout.dotGit, mode: 'ro', why: "the checkout's .git: read-only inside" })
    if (!within(checkout.dotGit, checkout.commonDir)) {
      mounts.push({ path: checkout.commonDir, mode: 'ro', why: "a linked checkout's repository: read-only" })
    }
  }
  // harness's own folder, when the agent's folder contains it: records, logs, other sessions' files.
  if (within(folder, harnessDir)) {
    mounts.push({ path: harnessDir, mode: 'ro', why: "harness's own files: read-only inside" })
  }
  return sortedMounts(mounts)
}

/** Parents first (a mount inside another is mounted after it); stable for mounts of the same depth. */
function sortedMounts(mounts: Mount[]): Mount[] {
  const depth = (mount: Mount) => mount.path.split(sep).filter(Boolean).length
  return mounts
    .map((mount, i) => ({ mount, i }))
    .sort((a, b) => depth(a.mount) - depth(b.mount) || a.i - b.i)
    .map(({ mount }) => mount)
}

/** A mount as the engine's `--volume` flag. */
export function volumeFlag(mount: Mount): string {
  return `--volume=${mount.source ?? mount.path}:${mount.path}:${mount.mode}`
}
