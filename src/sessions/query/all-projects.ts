import { join } from 'node:path'
import { errorMessage } from '../../errors.js'
import { assertOwnFolders, assertUsersFolder, HARNESS_DIR_NAME, pathsFor } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import { indexedProjects, projectKey } from '../project-index.js'
import { type ListFilters, seen, sortSessions } from './query.js'
import { reconcileViews, type SessionView } from './reconcile.js'

/** A session of `list --all-projects`: with the project folder it was found in. */
export type ProjectSessionView = SessionView & { project_dir: string }

/**
 * `session list --all-projects`: the sessions of every project in the user's index (sessions/project-index.ts)
 * and of this one, newest first, each with its project folder. Each project is read as `list` reads its own:
 * every record validated, sealed for its own project or shown foreign, the project's config never read. A
 * stale RUNNING session is shown PAUSED but not written (no command acts on another project behind the user's
 * back); a project whose `.harness` is not the user's, or holds links, is left out with a warning.
 */
export async function listAllProjects(ctx: SessionEnv, filters: ListFilters): Promise<ProjectSessionView[]> {
  const here = await ctx.project()
  const roots = new Set(await indexedProjects(ctx.env))
  if (here.exists) roots.add(projectKey(here.root))
  const [check, now] = seen(ctx)
  const found: ProjectSessionView[] = []
  for (const root of [...roots].sort()) {
    const paths = pathsFor(join(root, HARNESS_DIR_NAME))
    try {
      assertUsersFolder(paths.harnessDir)
      assertOwnFolders(paths)
    } catch (error) {
      ctx.warn(`${root}: not listed: ${errorMessage(error)}`)
      continue
    }
    const store = await ctx.storeOf(paths)
    const records = store.list().filter((record) => !filters.agent || filters.agent.includes(record.provider))
    for (const view of await reconcileViews(store, records, true, check, now)) {
      if (filters.status && !filters.status.includes(view.status)) continue
      found.push({ ...view, project_dir: root })
    }
  }
  return sortSessions(found, filters.sort).slice(0, filters.limit ?? Number.POSITIVE_INFINITY)
}
