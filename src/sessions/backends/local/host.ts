import { join } from 'node:path'
import {
  makeTempDir,
  readJson,
  removeEmptyDir,
  removeHeldSync,
  unlinkQuiet,
  writeFileAtomic,
} from '../../../disk/door.js'
import { ExternalToolError } from '../../../errors.js'
import { identify } from '../../../process/identity.js'
import { startDetachedSupervisor } from '../../../process/supervisor.js'
import { killTmuxSession, newTmuxSession } from '../../../process/tmux.js'
import { selfCommand, waitingProcessEnv } from '../../../runtime.js'
import type { RunHost } from '../backend.js'

/*
 * Where a local supervisor of a background run lives (docs/development/design.md, "Where runs live"), the local backend's
 * business (a container run's supervisor lives in the same places): a detached process of this machine, or the
 * process of a new tmux session's pane, so that the agent has a terminal that outlives the user's.
 */

export const detachedHost: RunHost = {
  kind: 'detached',
  async startSupervisor(env) {
    return startDetachedSupervisor(env)
  },
}

export interface TmuxPlace {
  socket: string
  session: string
  /** The pane's working directory. */
  cwd: string
}

/**
 * A supervisor in a new tmux session. tmux starts it (so it cannot get a pipe from us): its plan arrives as a
 * file in a private folder (0700) that it reads and removes at once; it waits for the file no longer than
 * `PLAN_PATIENCE_MS`.
 */
export function tmuxHost(place: TmuxPlace): RunHost {
  return {
    kind: 'tmux',
    async startSupervisor(env) {
      const folder = makeTempDir('harness-plan-')
      const planFile = join(folder, 'plan.json')
      let pid: number
      try {
        pid = await newTmuxSession({
          socket: place.socket,
          name: place.session,
          cwd: place.cwd,
          argv: selfCommand(['__supervise', '--tmux-plan', planFile]),
          env,
          paneEnv: waitingProcessEnv(),
        })
      } catch (error) {
        removeHeldSync(folder)
        throw error
      }
      const identity = identify(pid)
      const abandon = () => {
        removeHeldSync(folder)
        void killTmuxSession(place.socket, place.session, env)
      }
      if (!identity) {
        abandon()
        throw new ExternalToolError(
          `the supervisor in tmux session "${place.session}" ended at once`,
          undefined,
          'SUPERVISOR_FAILED',
        )
      }
      return {
        identity,
        send(plan) {
          writeFileAtomic(planFile, JSON.stringify(plan))
        },
        abandon,
      }
    },
  }
}

const PLAN_PATIENCE_MS = 60_000

/** The supervisor's side: waits for the plan file, reads it and removes its folder. Null if none came. */
export async function receivePlan(planFile: string): Promise<unknown | null> {
  const deadline = Date.now() + PLAN_PATIENCE_MS
  try {
    for (;;) {
      try {
        return readJson(planFile, 'small')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
      if (Date.now() > deadline) return null
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  } finally {
    // Only what the launcher made: the file and its (then empty) folder.
    unlinkQuiet(planFile)
    try {
      removeEmptyDir(join(planFile, '..'))
    } catch {}
  }
}
