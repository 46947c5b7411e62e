import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import {
  ensureDir,
  entryExists,
  lstatOrNull,
  readText,
  statOrNull,
  statPath,
  UnsafeFileError,
  writeFileAtomic,
  writeFileNew,
} from './disk/door.js'
import { IllegalStateError, shellWord, UsageError } from './errors.js'

/** Where a project's state lives (docs/record.md, "Where things live"). */
export interface ProjectPaths {
  /** The project root: the top of the main worktree, or the directory harness was pointed at. */
  root: string
  /** `<root>/.harness` */
  harnessDir: string
  sessionsDir: string
  logsDir: string
  configFile: string
  /** True when `.harness/` already exists on disk. */
  exists: boolean
}

export const HARNESS_DIR_NAME = '.harness'

export function pathsFor(harnessDir: string): ProjectPaths {
  return {
    root: dirname(harnessDir),
    harnessDir,
    sessionsDir: join(harnessDir, 'sessions'),
    logsDir: join(harnessDir, 'logs'),
    configFile: join(harnessDir, 'config.json'),
    exists: isDirectory(harnessDir),
  }
}

/** `$XDG_STATE_HOME/harness`, else `~/.local/state/harness` (a relative XDG path is ignored, per the XDG spec). */
export function userStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state')
  return join(base, 'harness')
}

/** A session's log: `.harness/logs/<id>.log`. */
export function logPathFor(logsDir: string, id: string): string {
  return join(logsDir, `${id}.log`)
}

/**
 * Finds `.harness/`: `--dir` or HARNESS_DIR (a project folder, or a `.harness` folder itself); else the
 * nearest `.harness/` walking up from cwd; else the top of the main worktree of the current git repository
 * (found through the common git dir, so it works from any linked worktree); else cwd.
 */
export async function findProject(options: {
  cwd: string
  dir?: string
  env: NodeJS.ProcessEnv
}): Promise<ProjectPaths> {
  const explicit = options.dir ?? (options.env.HARNESS_DIR || undefined)
  if (explicit) {
    const abs = resolve(options.cwd, explicit)
    return pathsFor(basename(abs) === HARNESS_DIR_NAME ? abs : join(abs, HARNESS_DIR_NAME))
  }
  const found = walkUp(options.cwd)
  if (found) return pathsFor(found)
  const { gitCommonDir } = await import('./git/git.js')
  const common = await gitCommonDir(options.cwd, options.env)
  if (common) {
    // A normal repository's common dir is `<top>/.git`; a bare one has no main worktree, so use cwd.
    if (basename(common) === '.git') return pathsFor(join(dirname(common), HARNESS_DIR_NAME))
  }
  return pathsFor(join(resolve(options.cwd), HARNESS_DIR_NAME))
}

/** The folders harness keeps in `.harness/`: none of them, nor `.harness/` itself, may be a symlink. */
const OWN_FOLDERS = ['sessions', 'logs', 'agents', 'worktrees', 'corrupt', 'chains', 'tmp', 'names']

/**
 * Refuses a `.harness` that is a file (usage error, exit 2) or that is, or holds, a symlink where harness keeps
 * its own folders (exit 4): a symlinked `.harness/logs` would make harness read or remove files elsewhere
 * (docs/security.md).
 */
export function assertOwnFolders(paths: ProjectPaths): void {
  // Missing folders are the common case: no exception for them (each costs a stack trace on every start).
  const kind = (path: string): 'missing' | 'dir' | 'symlink' | 'other' => {
    try {
      const stat = lstatOrNull(path)
      if (!stat) return 'missing'
      return stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'dir' : 'other'
    } catch {
      return 'missing'
    }
  }
  const top = kind(paths.harnessDir)
  if (top === 'missing') return
  if (top === 'other') {
    throw new UsageError(
      `${paths.harnessDir} is a file, not harness's folder`,
      'move it away, or point harness elsewhere with --dir',
      'HARNESS_NOT_A_FOLDER',
    )
  }
  for (const path of [paths.harnessDir, ...OWN_FOLDERS.map((name) => join(paths.harnessDir, name))]) {
    if (kind(path) === 'symlink') {
      throw new IllegalStateError(
        `${path} is a symlink: harness never follows links in its own folders`,
        'replace it with a real folder (its target is left alone)',
        'SYMLINK_REFUSED',
      )
    }
  }
}

/**
 * Walks up from `start` looking for a `.harness` directory, stopping at the top of the repository `start` is
 * in (the first folder holding a `.git`), like git's own discovery: a `.harness` above the repository is
 * never taken. The one found must be the user's (docs/security.md, "Walk-up"): owned by them and not
 * writable by others, else exit 4 naming the folder and its owner.
 */
export function walkUp(start: string): string | null {
  let dir = resolve(start)
  for (;;) {
    const candidate = join(dir, HARNESS_DIR_NAME)
    if (isDirectory(candidate)) return assertUsersFolder(candidate)
    if (entryExists(join(dir, '.git'))) return null
    const parent = dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}

/** `dir` when it is owned by the user harness runs as and not writable by others; else exit 4, UNSAFE_PROJECT. */
export function assertUsersFolder(dir: string): string {
  const uid = process.getuid?.()
  const stat = statPath(dir)
  if (uid !== undefined && stat.uid !== uid) {
    throw new IllegalStateError(
      `${dir} belongs to another user (uid ${stat.uid}), not to you (uid ${uid}): harness does not use it`,
      'use a project folder of your own, or name this one explicitly with --dir if you trust it',
      'UNSAFE_PROJECT',
    )
  }
  if ((stat.mode & 0o002) !== 0) {
    throw new IllegalStateError(
      `${dir} is writable by every user (mode ${(stat.mode & 0o7777).toString(8)}): harness does not use it`,
      `if it is yours: chmod o-w ${shellWord(dir)}`,
      'UNSAFE_PROJECT',
    )
  }
  return dir
}

/**
 * `.harness/.gitignore`: everything in `.harness/` stays out of `git status` of the user's repository but
 * `config.json`, which a team may commit (docs/configuration.md). The file ignores itself too, so that a
 * project without a config shows nothing untracked.
 */
const HARNESS_GITIGNORE =
  '# Written by harness: its state stays out of git; config.json may be committed.\n*\n!config.json\n'

/** What versions before 2026-12 wrote, replaced by the next command that writes (a file edited by hand stays). */
const OLD_GITIGNORE = '*\n'

/**
 * Creates `.harness/` (0700) for commands that write, with its `.gitignore` (HARNESS_GITIGNORE), without
 * touching the user's files.
 */
export function ensureProjectDirs(paths: ProjectPaths): void {
  ensureDir(paths.sessionsDir)
  const ignore = join(paths.harnessDir, '.gitignore')
  const present = lstatOrNull(ignore)
  // A link (even a dangling one) or a FIFO there is refused: writing "through" it would create a file elsewhere.
  if (present && !present.isFile())
    throw new UnsafeFileError(
      ignore,
      present.isSymbolicLink() ? 'a symlink' : 'not a plain file',
      'SYMLINK_REFUSED',
    )
  if (!present) {
    try {
      writeFileNew(ignore, HARNESS_GITIGNORE)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  } else if (present.size === OLD_GITIGNORE.length && readText(ignore, 'small') === OLD_GITIGNORE) {
    writeFileAtomic(ignore, HARNESS_GITIGNORE)
  }
  paths.exists = true
}

function isDirectory(path: string): boolean {
  try {
    return statOrNull(path)?.isDirectory() ?? false
  } catch {
    return false
  }
}
