import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { entryExists } from '../../../disk/door.js'
import { ExternalToolError } from '../../../errors.js'

/** The Slurm client commands harness runs (docs/backends.md, "The Slurm backend"). */
export type SlurmTool = 'sbatch' | 'squeue' | 'scancel' | 'scontrol' | 'sacct'

export interface SlurmResult {
  stdout: string
  stderr: string
  exitCode: number
}

/**
 * Runs one Slurm command with an argv (never a shell) under a deadline: the one seam of the Slurm module, which
 * unit tests replace with a stub that checks the argv and answers with canned output.
 */
export type SlurmExec = (
  tool: SlurmTool,
  args: string[],
  options?: {
    timeoutMs?: number
    /** `sbatch --export=ALL` of a job: its environment is Slurm's variables and these names only. */
    exportOnly?: readonly string[]
  },
) => Promise<SlurmResult>

/**
 * How long each command may take (SPEC §10: every command harness runs for itself has a deadline). A controller
 * that does not answer makes the clients retry for a long time on their own (`MessageTimeout`, 10 s a try).
 */
const SLURM_DEADLINES: Record<SlurmTool, number> = {
  sbatch: 60_000,
  squeue: 30_000,
  scancel: 30_000,
  scontrol: 30_000,
  sacct: 30_000,
}

/**
 * What the clients print when the controller cannot be reached (22.05): the connection refused, no route, a
 * timeout, or a controller that is not up.
 */
const UNREACHABLE =
  /Unable to contact slurm controller|Unable to establish control machine|Connection refused|No route to host|Socket timed out|Connection timed out|Zero Bytes were transmitted|communication connection failure|Transport endpoint is not connected/i

/**
 * The Slurm commands of `env`'s PATH, run in `env`. Times are asked in UTC and Slurm's standard format whatever
 * the user's `TZ` and `SLURM_TIME_FORMAT` say, so a job's submit time reads the same in every later call: it is
 * part of the job's identity.
 */
export function slurmExec(env: NodeJS.ProcessEnv): SlurmExec {
  const toolEnv = { ...env, TZ: 'UTC', SLURM_TIME_FORMAT: 'standard' }
  return (tool, args, options = {}) =>
    new Promise((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? SLURM_DEADLINES[tool]
      const only = options.exportOnly
      // A job's submission: the command found on PATH, run with no PATH (nor anything else) to pass on.
      const command = only ? toolPath(tool, env) : tool
      if (!command) return reject(slurmMissing(tool))
      execFile(
        command,
        args,
        {
          env: only ? submitEnvironment(env, only) : toolEnv,
          timeout: timeoutMs,
          killSignal: 'SIGKILL',
          maxBuffer: 64 * 1024 * 1024,
          encoding: 'utf8',
        },
        (error, stdout, stderr) => {
          if (!error) return resolve({ stdout, stderr, exitCode: 0 })
          const code = (error as NodeJS.ErrnoException).code
          if (code === 'ENOENT') return reject(slurmMissing(tool))
          if (error.killed) return reject(slurmTimedOut(tool, timeoutMs))
          if (typeof code === 'string' || error.signal) {
            const why = typeof code === 'string' ? code : `killed by ${error.signal}`
            return reject(
              new ExternalToolError(`cannot run ${tool}: ${why}`, undefined, 'SLURM_FAILED', error),
            )
          }
          resolve({ stdout, stderr, exitCode: typeof code === 'number' ? code : 1 })
        },
      )
    })
}

/**
 * The environment `sbatch --export=ALL` submits a job from (SPEC §14: nothing of harness's environment but the
 * named variables): Slurm's own variables (`SLURM_*`, and `SBATCH_*`, which are sbatch's options, but those of
 * the environment it exports), as `--export=NONE` passes them, and the variables named in `slurm.env`.
 */
export function submitEnvironment(env: NodeJS.ProcessEnv, names: readonly string[]): NodeJS.ProcessEnv {
  const named = new Set(names)
  const kept: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(env)) {
    const slurms =
      name.startsWith('SLURM_') || (name.startsWith('SBATCH_') && !name.startsWith('SBATCH_EXPORT'))
    if (value !== undefined && (slurms || named.has(name))) kept[name] = value
  }
  return kept
}

/** Where `tool` is on `env`'s PATH (its first absolute folder that has it), or null; never run, only looked for. */
export function toolPath(tool: SlurmTool, env: NodeJS.ProcessEnv): string | null {
  const dir = (env.PATH ?? '').split(':').find((dir) => dir.startsWith('/') && entryExists(join(dir, tool)))
  return dir ? join(dir, tool) : null
}

/** No such command on PATH: exit 5 naming it. */
export function slurmMissing(tool: SlurmTool): ExternalToolError {
  return new ExternalToolError(
    `${tool} not found on PATH: the Slurm backend needs Slurm's client commands`,
    'run harness on a host of the cluster (a login node), or install slurm-client',
    'SLURM_MISSING',
  )
}

function slurmTimedOut(tool: SlurmTool, timeoutMs: number): ExternalToolError {
  return new ExternalToolError(
    `${tool} did not answer within ${Math.round(timeoutMs / 1000)} s`,
    'is the Slurm controller reachable? try "scontrol ping"',
    'SLURM_TIMEOUT',
  )
}

/** Slurm's last line of complaint, for messages. */
function slurmDetail(result: SlurmResult): string {
  const lines = result.stderr.trim().split('\n').filter(Boolean)
  return (lines.pop() ?? `exit code ${result.exitCode}`).replace(/^\w+: error: /, '')
}

/**
 * A failed command as the error to show: an unreachable controller is exit 5 `SLURM_UNREACHABLE`, anything
 * else exit 5 `SLURM_FAILED`, both naming the command and what Slurm said.
 */
export function slurmFailure(tool: SlurmTool, result: SlurmResult, what: string): ExternalToolError {
  if (UNREACHABLE.test(result.stderr)) {
    return new ExternalToolError(
      `${tool} cannot reach the Slurm controller: ${slurmDetail(result)}`,
      'is slurmctld up, and SLURM_CONF right? try "scontrol ping"',
      'SLURM_UNREACHABLE',
    )
  }
  return new ExternalToolError(`${tool} could not ${what}: ${slurmDetail(result)}`, undefined, 'SLURM_FAILED')
}

/** Runs a command that must succeed; its standard output. */
export async function slurmText(
  exec: SlurmExec,
  tool: SlurmTool,
  args: string[],
  what: string,
): Promise<string> {
  const result = await exec(tool, args)
  if (result.exitCode !== 0) throw slurmFailure(tool, result, what)
  return result.stdout
}
