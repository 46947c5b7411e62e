import { mkdtempSync, readFileSync, renameSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ExternalToolError } from '../errors.js'
import { identify, type ProcessIdentity } from './identity.js'

/**
 * Where a background run's supervisor lives (docs/design.md, "Where runs live"): `local` starts it as a
 * detached process of this machine; `tmux` starts it as the process of a new tmux session's pane, so that the
 * agent has a terminal that outlives the user's. A future backend (a container, a Kubernetes Job) is one
 * more implementation of this interface.
 */
export interface RunHost {
  readonly kind: 'local' | 'tmux'
  /** Starts a supervisor that does nothing until it gets its plan (`send`), or exits on `abandon`. */
  startSupervisor(env: NodeJS.ProcessEnv): Promise<HostedSupervisor>
}

export interface HostedSupervisor {
  identity: ProcessIdentity
  /** Hands the supervisor its work, once the record naming it is committed. */
  send(plan: unknown): void
  /** Gives up before committing: the supervisor starts nothing and goes away. */
  abandon(): void
}

export const localHost: RunHost = {
  kind: 'local',
  async startSupervisor(env) {
    const { startDetachedSupervisor } = await import('./supervisor.js')
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
      const { harnessCommand } = await import('./supervisor.js')
      const { killTmuxSession, newTmuxSession } = await import('./tmux.js')
      const folder = mkdtempSync(join(tmpdir(), 'harness-plan-'))
      const planFile = join(folder, 'plan.json')
      let pid: number
      try {
        pid = await newTmuxSession({
          socket: place.socket,
          name: place.session,
          cwd: place.cwd,
          argv: harnessCommand('__supervise', '--tmux-plan', planFile),
          env,
        })
      } catch (error) {
        rmSync(folder, { recursive: true, force: true })
        throw error
      }
      const identity = identify(pid)
      const abandon = () => {
        rmSync(folder, { recursive: true, force: true })
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
          const temp = `${planFile}.tmp`
          writeFileSync(temp, JSON.stringify(plan), { mode: 0o600 })
          renameSync(temp, planFile)
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
        return JSON.parse(readFileSync(planFile, 'utf8'))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
      if (Date.now() > deadline) return null
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  } finally {
    // Only what the launcher made: the file and its (then empty) folder.
    for (const remove of [() => unlinkSync(planFile), () => rmdirSync(join(planFile, '..'))]) {
      try {
        remove()
      } catch {}
    }
  }
}
