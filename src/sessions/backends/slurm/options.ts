import * as z from 'zod/mini'
import { UsageError } from '../../../errors.js'

/** A variable's name (`slurm.env`): only its name is ever written, its value read by `sbatch` itself. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Slurm's time formats (`--time`): minutes, m:s, h:m:s, d-h, d-h:m, d-h:m:s, or no limit. */
const SLURM_TIME = /^(?:\d{1,7}(?::\d{1,2}){0,2}|\d{1,5}-\d{1,2}(?::\d{1,2}){0,2}|UNLIMITED|INFINITE)$/

/** A partition's or account's name: what Slurm allows, and never something `sbatch` could read as a flag. */
const SLURM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$/

/**
 * Config `slurm.*` (docs/backends.md, "The Slurm backend"). Read by the Slurm module itself, so that the keys
 * and their checks live beside what uses them.
 */
export const SlurmConfigSchema = z.strictObject({
  /** `sbatch --partition`. */
  partition: z.optional(z.string().check(z.regex(SLURM_NAME, 'a partition name'))),
  /** `sbatch --account`. */
  account: z.optional(z.string().check(z.regex(SLURM_NAME, 'an account name'))),
  /** Slurm's own time limit of each job (`--time`), unless the run has a `--timeout`. */
  time: z.optional(z.string().check(z.regex(SLURM_TIME, 'a Slurm time limit (minutes, h:m:s, d-h:m:s)'))),
  /** More `sbatch` options, one `--name=value` (or a known bare flag) each (guardOptions). */
  options: z.optional(z.array(z.string())),
  /** A folder the submit host and every node see (the site's shared filesystem); absolute. */
  spool: z.optional(z.string().check(z.regex(/^\//, 'an absolute path'))),
  /** Node-local scratch at the same path on every node; unset, the job's $TMPDIR (or /tmp). */
  scratch: z.optional(z.string().check(z.regex(/^\/[^\0\n]*$/, 'an absolute path'))),
  /** Names of variables the job gets (`--export=NAME,...`): never their values. */
  env: z.optional(z.array(z.string().check(z.regex(ENV_NAME, 'a variable name')))),
})
export type SlurmConfig = z.infer<typeof SlurmConfigSchema>

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
