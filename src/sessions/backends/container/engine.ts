import { spawn } from 'node:child_process'
import { access, constants } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import { ExternalToolError } from '../../../errors.js'

/** The container engines harness can drive (docs/backends.md); autodetected in this order. */
const ENGINES = ['podman', 'docker'] as const
export type EngineName = (typeof ENGINES)[number]

/** An engine found on PATH: its name and the binary harness runs. */
export interface Engine {
  name: EngineName
  binary: string
}

/** What the engine says of one container; null when it has none by that id. */
export interface ContainerState {
  id: string
  created: string
  running: boolean
  status: string
  exitCode: number | null
}

/** The engine's identity of a container, kept in the sealed record: it plays the role of pid + start time. */
export interface ContainerIdentity {
  id: string
  created: string
}

export interface EngineResult {
  stdout: string
  stderr: string
  exitCode: number
}

async function onPath(name: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, name)
    try {
      await access(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return null
}

/**
 * The engine to use: the one named (`--engine`, `container.engine`), else the first of podman, docker on PATH.
 * Missing is exit 5 naming it.
 */
export async function findEngine(wanted: EngineName | undefined, env: NodeJS.ProcessEnv): Promise<Engine> {
  for (const name of wanted ? [wanted] : ENGINES) {
    const binary = await onPath(name, env)
    if (binary) return { name, binary }
  }
  throw new ExternalToolError(
    wanted
      ? `container engine "${wanted}" not found on PATH`
      : 'no container engine found on PATH (looked for podman, then docker)',
    'install podman (or docker), or run without --backend container (see README.md, "Sandboxed sessions")',
    'ENGINE_MISSING',
  )
}

/**
 * How long one engine call may take (SPEC §10: every command harness runs for itself has a deadline): a look
 * (inspect, version) is quick when the engine is well; making a container may pull its image. Generous on a busy
 * machine, never infinite. `wait` on the user's behalf has none (the user holds it: Ctrl-C or `--timeout`).
 */
export const ENGINE_DEADLINES = {
  look: 20_000,
  act: 120_000,
  create: 10 * 60_000,
} as const

/** The engine did not answer in time: it was stopped, and the command goes on with what it knows (exit 5 if not). */
export class EngineTimeoutError extends ExternalToolError {
  constructor(engine: Engine, args: string[], ms: number) {
    super(
      `${engine.name} did not answer within ${Math.round(ms / 1000)} s (${engine.name} ${args[0] ?? ''})`,
      `check "${engine.name} info"; a hung engine can be restarted (e.g. "systemctl --user restart podman")`,
      'ENGINE_TIMEOUT',
    )
  }
}

// An engine that let one call run out its deadline is not asked again by this process: a listing of many
// container sessions waits for it once, not once per session.
const unresponsive = new Set<string>()

/**
 * Runs the engine with an argv (never a shell) under a deadline; whatever it exits with is returned. Past the
 * deadline the client is killed (its pipes closed: a child of it may hold them) and EngineTimeoutError thrown.
 */
export function runEngine(
  engine: Engine,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { timeoutMs?: number | null } = {},
): Promise<EngineResult> {
  const deadline = options.timeoutMs === null ? null : (options.timeoutMs ?? ENGINE_DEADLINES.look)
  if (unresponsive.has(engine.binary)) {
    return Promise.reject(new EngineTimeoutError(engine, args, deadline ?? ENGINE_DEADLINES.look))
  }
  return new Promise((resolve, reject) => {
    // Its own process group: past the deadline the client and whatever it started are killed together.
    const child = spawn(engine.binary, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let size = 0
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length
      if (size <= ENGINE_OUTPUT_LIMIT) into.push(chunk)
    }
    child.stdout?.on('data', collect(out))
    child.stderr?.on('data', collect(err))
    let timedOut = false
    const timer =
      deadline === null
        ? undefined
        : setTimeout(() => {
            timedOut = true
            try {
              if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
            } catch {
              child.kill('SIGKILL')
            }
            child.stdout?.destroy()
            child.stderr?.destroy()
          }, deadline)
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(
        new ExternalToolError(`cannot run ${engine.name}: ${error.code}`, undefined, 'ENGINE_FAILED', error),
      )
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      if (timedOut) {
        unresponsive.add(engine.binary)
        reject(new EngineTimeoutError(engine, args, deadline ?? 0))
        return
      }
      const stdout = Buffer.concat(out).toString('utf8')
      const stderr = Buffer.concat(err).toString('utf8')
      resolve({ stdout, stderr, exitCode: size > ENGINE_OUTPUT_LIMIT ? 1 : (code ?? 1) })
    })
  })
}

/** The most output one engine call may give: past it the call has failed (an inspect is a few KiB). */
const ENGINE_OUTPUT_LIMIT = 16 * 1024 * 1024

/** The engine's last error line, for messages. */
function engineDetail(result: EngineResult): string {
  const lines = result.stderr.trim().split('\n').filter(Boolean)
  return (lines.pop() ?? `exit code ${result.exitCode}`).replace(/^Error: /, '')
}

/** Runs the engine; a non-zero exit is exit 5 naming the engine and what it said. */
export async function engineText(
  engine: Engine,
  args: string[],
  env: NodeJS.ProcessEnv,
  what: string,
  timeoutMs: number = ENGINE_DEADLINES.act,
): Promise<string> {
  const result = await runEngine(engine, args, env, { timeoutMs })
  if (result.exitCode !== 0) {
    throw new ExternalToolError(
      `${engine.name} could not ${what}: ${engineDetail(result)}`,
      `check "${engine.name} info" (or run "harness doctor")`,
      'ENGINE_FAILED',
    )
  }
  return result.stdout.trim()
}

/** The engine's view of one container, or null when it has none by that id. */
export async function inspectContainer(
  engine: Engine,
  id: string,
  env: NodeJS.ProcessEnv,
): Promise<ContainerState | null> {
  // `--type container`: an image or volume of that name is never taken for it.
  const result = await runEngine(engine, ['inspect', '--type', 'container', '--', id], env)
  if (result.exitCode !== 0) return null
  let parsed: unknown
  try {
    parsed = JSON.parse(result.stdout)
  } catch {
    return null
  }
  return containerStateOf(Array.isArray(parsed) ? parsed[0] : undefined)
}

/**
 * The engine's view of many containers in one call (`inspect` of all their ids): those it has, by id. The engine
 * exits non-zero when some id is unknown, and still prints the others.
 */
export async function inspectMany(
  engine: Engine,
  ids: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, ContainerState>> {
  const found = new Map<string, ContainerState>()
  if (ids.length === 0) return found
  const result = await runEngine(engine, ['inspect', '--type', 'container', '--', ...new Set(ids)], env)
  let parsed: unknown
  try {
    parsed = JSON.parse(result.stdout)
  } catch {
    return found
  }
  for (const item of Array.isArray(parsed) ? parsed : []) {
    const state = containerStateOf(item)
    if (state) found.set(state.id, state)
  }
  return found
}

/** One entry of `inspect`'s array, checked; null when it does not have the form. */
function containerStateOf(item: unknown): ContainerState | null {
  const first = item as Record<string, unknown> | undefined
  if (!first || typeof first.Id !== 'string' || typeof first.Created !== 'string') return null
  const state = (first.State ?? {}) as Record<string, unknown>
  return {
    id: first.Id,
    created: first.Created,
    running: state.Running === true,
    status: typeof state.Status === 'string' ? state.Status : 'unknown',
    exitCode: typeof state.ExitCode === 'number' ? state.ExitCode : null,
  }
}

/** The container, only if the engine reports the very identity the record holds (id and created time). */
export async function verifiedContainer(
  engine: Engine,
  identity: ContainerIdentity,
  env: NodeJS.ProcessEnv,
): Promise<ContainerState | 'gone' | 'mismatch'> {
  const state = await inspectContainer(engine, identity.id, env)
  if (!state) return 'gone'
  return state.id === identity.id && state.created === identity.created ? state : 'mismatch'
}

/** Stops (SIGTERM, then after `graceMs` SIGKILL) and removes a container whose identity was just verified. */
export async function stopAndRemove(
  engine: Engine,
  id: string,
  graceMs: number,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const seconds = Math.max(0, Math.ceil(graceMs / 1000))
  await runEngine(engine, ['stop', '--time', String(seconds), '--', id], env, {
    timeoutMs: graceMs + ENGINE_DEADLINES.act,
  })
  await removeContainer(engine, id, env)
}

/** Removes a container (forcing a running one down); one already gone is fine. */
export async function removeContainer(engine: Engine, id: string, env: NodeJS.ProcessEnv): Promise<void> {
  // podman's `rm --force` would first wait the container's own stop timeout (10 s); docker's kills at once.
  const now = engine.name === 'podman' ? ['--time=0'] : []
  await runEngine(engine, ['rm', '--force', ...now, '--', id], env, { timeoutMs: ENGINE_DEADLINES.act })
}

/** Blocks until the container has exited; its exit code, or null when the engine could not say. */
export async function waitContainer(
  engine: Engine,
  id: string,
  env: NodeJS.ProcessEnv,
  timeoutMs?: number,
): Promise<number | null> {
  // The user holds a wait (its own --timeout, or Ctrl-C): no deadline of harness's.
  const result = await runEngine(engine, ['wait', '--', id], env, { timeoutMs: timeoutMs ?? null })
  if (result.exitCode !== 0) return null
  const code = Number.parseInt(result.stdout.trim().split('\n').pop() ?? '', 10)
  return Number.isInteger(code) ? code : null
}
