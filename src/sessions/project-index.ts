import { join } from 'node:path'
import { ensureDir, lstatOrNull, readJson, realPath, writeFileAtomic } from '../disk/door.js'
import { ensureProjectDirs, HARNESS_DIR_NAME, type ProjectPaths, userStateDir } from '../project.js'
import { withLock } from './record/lock.js'

/*
 * The user's index of the projects harness has run in (`session list --all-projects`, docs/commands.md): the
 * file `$XDG_STATE_HOME/harness/projects.json` (0600, in the 0700 state folder, beside trust.json), written
 * under its lock (`projects.json.lock`) when a command makes or first uses a project's `.harness`, and pruned
 * of folders that are gone when it is listed. It holds paths only; what is in each project is read, as any
 * project's records are, through every trust rule (sealed or foreign, never acted on).
 */

interface IndexFile {
  projects: Record<string, { added_at: string }>
}

/** `$XDG_STATE_HOME/harness/projects.json`. */
function projectIndexFile(env: NodeJS.ProcessEnv): string {
  return join(userStateDir(env), 'projects.json')
}

function readIndex(file: string): IndexFile {
  try {
    const value = readJson(file, 'small') as Partial<IndexFile> | null
    if (value && typeof value.projects === 'object' && value.projects && !Array.isArray(value.projects)) {
      return { projects: value.projects }
    }
  } catch {}
  return { projects: {} }
}

/** Changes the index under its lock: `change` gets it as it is now and says whether to write it back. */
async function updateIndex(
  env: NodeJS.ProcessEnv,
  change: (index: IndexFile) => boolean,
): Promise<IndexFile> {
  const file = projectIndexFile(env)
  ensureDir(userStateDir(env))
  return withLock(`${file}.lock`, { what: 'the project index' }, () => {
    const index = readIndex(file)
    if (change(index)) writeFileAtomic(file, `${JSON.stringify(index, null, 2)}\n`)
    return index
  })
}

/** The real path of a project folder (the index's key), or the path as given when it cannot be resolved. */
export function projectKey(root: string): string {
  try {
    return realPath(root)
  } catch {
    return root
  }
}

/**
 * Makes the project's `.harness` as `ensureProjectDirs` does, and puts the project in the user's index when it is
 * not there yet (one read when it is). The index is a convenience: failing to write it never fails the command.
 */
export async function ensureProject(env: NodeJS.ProcessEnv, paths: ProjectPaths): Promise<void> {
  ensureProjectDirs(paths)
  try {
    const key = projectKey(paths.root)
    if (readIndex(projectIndexFile(env)).projects[key]) return
    await updateIndex(env, (index) => {
      if (index.projects[key]) return false
      index.projects[key] = { added_at: new Date().toISOString() }
      return true
    })
  } catch {}
}

/** The projects of the index whose `.harness` is still there, sorted; the others are dropped from it. */
export async function indexedProjects(env: NodeJS.ProcessEnv): Promise<string[]> {
  const here = (root: string) => lstatOrNull(join(root, HARNESS_DIR_NAME))?.isDirectory() === true
  let index = readIndex(projectIndexFile(env))
  if (Object.keys(index.projects).some((root) => !here(root))) {
    try {
      index = await updateIndex(env, (current) => {
        const gone = Object.keys(current.projects).filter((root) => !here(root))
        for (const root of gone) delete current.projects[root]
        return gone.length > 0
      })
    } catch {
      // A read-only state folder: list what is there, prune another time.
    }
  }
  return Object.keys(index.projects).filter(here).sort()
}
