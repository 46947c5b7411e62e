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
