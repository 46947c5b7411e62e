import { resolve } from 'node:path'
import { queryAgentCli } from '../../process/agent-query.js'

/**
 * The agent's own session id when its output did not say it (every interactive run; a headless one whose id
 * was not seen): read from the agent's own list of sessions once the run has ended, so that a resume is exact
 * (SPEC §6). Only a session made in this run's folder since the run began counts; when none does, nothing is
 * learnt and a resume is refused (RESUME_NOT_EXACT), never guessed.
 */

/** A session as an agent lists it. */
export interface ListedSession {
  id: string
  directory: string
  createdMs: number
  updatedMs: number
}

interface SessionList {
  args: string[]
  parse(output: string): ListedSession[]
}

/**
 * opencode 1.18.33 `session list --format json` (run in the folder, so in its project): an array of
 * `{id, title, updated, created, projectId, directory}`, times in ms. Every worktree of a repository is one
 * opencode project, so `directory` is what tells this session's conversations from the others'.
 */
export function parseOpencodeSessionList(output: string): ListedSession[] {
  let value: unknown
  try {
    value = JSON.parse(output)
  } catch {
    return []
  }
  if (!Array.isArray(value)) return []
  return value.flatMap((item): ListedSession[] => {
    if (typeof item !== 'object' || item === null) return []
    const { id, directory, created, updated } = item as Record<string, unknown>
    if (typeof id !== 'string' || id === '' || typeof directory !== 'string') return []
    const createdMs = typeof created === 'number' ? created : Number.NaN
    const updatedMs = typeof updated === 'number' ? updated : createdMs
    return [{ id, directory, createdMs, updatedMs }]
  })
}

/** Per provider: how to list its sessions. A provider not here prints its id, or is resumed without one. */
const SESSION_LISTS: Record<string, SessionList> = {
  opencode: { args: ['session', 'list', '--format', 'json'], parse: parseOpencodeSessionList },
}

/** Clocks of the agent and of harness are the same machine's; a second covers rounding of either. */
const CLOCK_SLACK_MS = 1000

/** The session of `dir` made since `sinceMs`, last updated first; undefined when there is none. */
export function chooseSession(sessions: ListedSession[], dir: string, sinceMs: number): string | undefined {
  const here = resolve(dir)
  const mine = sessions.filter(
    (s) =>
      resolve(s.directory) === here &&
      Number.isFinite(s.createdMs) &&
      s.createdMs >= sinceMs - CLOCK_SLACK_MS,
  )
  mine.sort((a, b) => b.updatedMs - a.updatedMs)
  return mine[0]?.id
}

/** What the learning needs of the run (a subset of its plan). */
export interface RunFacts {
  provider?: string
  kind: 'start' | 'resume'
  command: string
  cwd: string
  env: NodeJS.ProcessEnv
}

/** A listing may take a few seconds (opencode opens its database); it never holds the outcome up longer. */
const LIST_TIMEOUT_MS = 30_000

/**
 * The id of the session this run started, from the agent's session list; `startedAt` is the run's
 * `started_at`. Only a start learns: a resume runs with the id it was given.
 */
export async function learnAgentSessionId(
  run: RunFacts,
  startedAt: string | undefined,
): Promise<string | undefined> {
  const list = run.provider ? SESSION_LISTS[run.provider] : undefined
  const since = startedAt ? Date.parse(startedAt) : Number.NaN
  if (!list || run.kind !== 'start' || !Number.isFinite(since)) return undefined
  const output = await queryAgentCli(run.command, list.args, {
    cwd: run.cwd,
    env: run.env,
    timeoutMs: LIST_TIMEOUT_MS,
  })
  return output === null ? undefined : chooseSession(list.parse(output), run.cwd, since)
}
