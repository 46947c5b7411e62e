import { listProviders } from '../providers/args.js'
import type { SessionEnv } from './ports.js'
import type { SessionRecord } from './record/schema.js'

/** One candidate for the word being completed; the description is shown by zsh and fish. */
export interface Candidate {
  value: string
  description?: string
  /** A session's name (`run --name`), offered beside the ids wherever an id is taken but `--session-id`. */
  isName?: boolean
}

/** Values that only the running program knows: live sessions and configured agents. */
export interface CompletionSources {
  sessions: () => Promise<Candidate[]>
  agents: () => Promise<Candidate[]>
  /** Chain names, for `harness chain <command> <name>`. */
  chains?: () => Promise<Candidate[]>
}

const MAX_TASK = 60

/**
 * Session ids (newest first, described by status and task) and agent names, read without writing anything.
 * A broken record or config must not break Tab: what cannot be read is left out.
 */
export function completionSources(
  ctx: SessionEnv,
  /** A session's task on one line (the CLI gives the list's own label). */
  taskLabel: (session: SessionRecord) => string,
): CompletionSources {
  return {
    sessions: async () => {
      try {
        const paths = await ctx.project()
        if (!paths.exists) return []
        const store = await ctx.store()
        const sessions = store.list().sort((a, b) => b.created_at.localeCompare(a.created_at))
        const described = (s: SessionRecord) => {
          const task = taskLabel(s)
          return `${s.status} ${task.length > MAX_TASK ? `${task.slice(0, MAX_TASK - 1)}…` : task}`
        }
        // Names after the ids, each said which session it names; one that does not resolve is left out.
        const named = sessions.filter((s) => typeof s.name === 'string' && store.idOfName(s.name) === s.id)
        return [
          ...sessions.map((s): Candidate => ({ value: s.id, description: described(s) })),
          ...named.map(
            (s): Candidate => ({
              value: s.name as string,
              description: `${s.id} ${described(s)}`,
              isName: true,
            }),
          ),
        ]
      } catch {
        return []
      }
    },
    chains: async () => {
      try {
        const paths = await ctx.project()
        if (!paths.exists) return []
        const chains = await ctx.chains()
        return chains.list().map((c) => ({ value: c.name, description: `${c.steps.length} steps` }))
      } catch {
        return []
      }
    },
    agents: async () => {
      let config = {}
      try {
        config = await ctx.config()
      } catch {}
      return listProviders(config).map((p) => ({ value: p.name, description: p.description ?? '' }))
    },
  }
}
