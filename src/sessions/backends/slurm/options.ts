import { UsageError } from '../../../errors.js'

/**
 * The `sbatch` options harness sets itself, or that would break what it relies on: the job's environment
 * (secrets), its files, its signals, requeueing, the script, the submission's output and its identity. `sbatch`
 * takes any unique prefix of a long option (`--exp=ALL` is `--export=ALL`), so a prefix of one of these is
 * refused too.
 */
const OWNED = [
  'export',
  'export-file',
  'get-user-env',
  'output',
  'error',
  'input',
  'open-mode',
  'chdir',
  'job-name',
  'signal',
  'requeue',
  'no-requeue',
  'parsable',
  'wrap',
  'array',
  'test-only',
  'wait',
  'time',
  'partition',
  'account',
  'clusters',
  'cluster-constraint',
  'uid',
  'gid',
  'help',
  'usage',
  'version',
]

/**
 * Flags that take no value (or an optional one, given only as `--flag=value`): the only options allowed bare.
 * Any other bare option would take the next argument as its value, swallowing one of harness's own.
 */
const BARE = new Set([
  'contiguous',
  'exclusive',
  'hold',
  'ignore-pbs',
  'nice',
  'no-kill',
  'overcommit',
  'oversubscribe',
  'quiet',
  'reboot',
  'spread-job',
  'use-min-nodes',
])

const OPTION = /^--([a-z][a-z0-9-]*)(=[^\0\n\r]*)?$/

/**
 * `slurm.options`, checked: each one long option, `--name=value` (or a known bare flag), none of harness's
 * own, nothing that could be read as the script or as two arguments. A refused one is a usage error naming it.
 */
export function guardOptions(options: readonly string[]): string[] {
  for (const option of options) {
    const match = OPTION.exec(option)
    const name = match?.[1]
    const refuse = (why: string) =>
      new UsageError(
        `slurm.options: "${option.replace(/[^\x20-\x7e]/g, '?')}" is refused: ${why}`,
        'give each option as one "--name=value"; harness sets --export, --output, --time, --partition, ... itself',
        'SLURM_OPTION_REFUSED',
      )
    if (!match || !name) throw refuse('not a long option written as --name=value')
    if (OWNED.some((owned) => owned.startsWith(name))) throw refuse(`harness sets --${name} itself`)
    if (match[2] === undefined && !BARE.has(name))
      throw refuse(`--${name} needs its value as --${name}=VALUE`)
  }
  return [...options]
}

/**
 * `--time` of a run: its `--timeout` (whole minutes, rounded up; Slurm counts in minutes, and 0 would mean no
 * limit), else `slurm.time`, else none (the partition's default).
 */
export function jobTimeLimit(timeoutMs: number | null, configured: string | undefined): string | null {
  if (timeoutMs !== null) return String(Math.max(1, Math.ceil(timeoutMs / 60_000)))
  return configured ?? null
}

/**
 * The seconds of a Slurm time limit as `--time` takes it (minutes, m:s, h:m:s, d-h, d-h:m, d-h:m:s); null for
 * none (the partition's default, unknown here) or no limit.
 */
export function timeLimitSeconds(time: string | null): number | null {
  const match = time === null ? null : /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(time)
  if (!match) return null
  const [, days, first = '0', second, third] = match
  const n = (part: string | undefined) => Number(part ?? 0)
  if (days !== undefined) return ((n(days) * 24 + n(first)) * 60 + n(second)) * 60 + n(third)
  if (third !== undefined) return (n(first) * 60 + n(second)) * 60 + n(third)
  return n(first) * 60 + n(second)
}

/** The lead of `--signal=B:TERM@<lead>` when the limit is unknown or long. */
const SEND_BACK_MAX_SECONDS = 120
const SEND_BACK_MIN_SECONDS = 10

/**
 * How many seconds before the time limit Slurm is asked to TERM the job script, so that it stops the agent and
 * sends the work back (docs/backends.md, "The submission"): a quarter of the limit, at least 10 s and at most
 * 2 minutes; 2 minutes when the limit is the partition's. Slurm checks limits every 30 s, so its TERM comes
 * 30-60 s before the time asked: a fixed 2 minutes would end a 2-minute job at its first check.
 */
export function sendBackLead(time: string | null): number {
  const limit = timeLimitSeconds(time)
  if (limit === null || limit === 0) return SEND_BACK_MAX_SECONDS
  return Math.min(SEND_BACK_MAX_SECONDS, Math.max(SEND_BACK_MIN_SECONDS, Math.floor(limit / 4)))
}
