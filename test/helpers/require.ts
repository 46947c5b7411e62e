import { spawnSync } from 'node:child_process'

/**
 * The one place a test decides to skip for lack of a part of the machine (a container engine, tmux, a Slurm
 * cluster, the real agent CLIs). Without that part the tests that need it skip with a visible line saying why;
 * with `HARNESS_REQUIRE_<PART>=1` (CI sets them all: .ci/run) the same lack is a failure instead, so a CI
 * machine that lost a part cannot pass by skipping.
 */
const VARIABLES = {
  podman: 'HARNESS_REQUIRE_PODMAN',
  tmux: 'HARNESS_REQUIRE_TMUX',
  slurm: 'HARNESS_REQUIRE_SLURM',
  'real-clis': 'HARNESS_REQUIRE_REAL_CLIS',
} as const
export type MachinePart = keyof typeof VARIABLES

/** Whether `part` is required here (its variable is 1): a skip would then be a failure. */
export function required(part: MachinePart): boolean {
  return process.env[VARIABLES[part]] === '1'
}

/**
 * Whether the tests of `what` that need `part` run: true when `missing` is undefined (the part is there).
 * Otherwise they skip, saying so on one line; or, when the part is required, this throws (the file fails).
 */
export function runsWith(part: MachinePart, what: string, missing: string | undefined): boolean {
  if (missing === undefined) return true
  if (required(part)) throw new Error(`${VARIABLES[part]}=1, but ${what} cannot run: ${missing}`)
  console.log(`${what} skipped: ${missing} (${VARIABLES[part]}=1 makes this a failure)`)
  return false
}

/** Why tmux cannot be used here, or undefined when it can. */
export function tmuxMissing(): string | undefined {
  return spawnSync('tmux', ['-V']).status === 0 ? undefined : 'tmux is not installed'
}
