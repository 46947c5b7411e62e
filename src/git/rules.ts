import { parseDuration } from '../duration.js'
import { UsageError } from '../errors.js'

/**
 * What every git call harness makes is held to (SPEC §10, "What comes back from an agent is input";
 * docs/security.md). Any folder git runs in may hold what an agent wrote: nested repositories with their own
 * config, `.gitmodules`, FIFOs. So the one runner (git.ts) puts these rules on every call, and no call can
 * leave them out:
 *
 * - configuration given on the command line, which wins over every file: a bare repository is used only when
 *   named (`safe.bareRepository=explicit`), no fsmonitor command runs, and git never goes into a nested
 *   repository (`submodule.recurse=false`, `diff.ignoreSubmodules=dirty`, `status.submoduleSummary=false`);
 * - the commands that compare a worktree's files (`status`, `diff`, `diff-files`, `diff-index`) get
 *   `--ignore-submodules=dirty` on their command line: only that overrides a `.gitmodules` an agent wrote
 *   (`ignore = none`), and without it git runs `git status` inside each checked-out nested repository, which
 *   reads that repository's own config (its clean filters, its fsmonitor);
 * - `git add` always does that for nested repositories whatever it is told, so it runs only through
 *   `stageWorktree` (stage.ts), which leaves them out of it;
 * - a deadline (`gitDeadlineMs`): a git that hangs (on a FIFO an agent left where a ref should be, a filter that
 *   never ends) is stopped and reported, exit 5.
 *
 * Filters the user defined (global or system config, or the repository's own `.git/config`: git-lfs) still
 * apply: they are the user's, not the agent's.
 */
export const SAFE_GIT_CONFIG = [
  '-c',
  'safe.bareRepository=explicit',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'submodule.recurse=false',
  '-c',
  'diff.ignoreSubmodules=dirty',
  '-c',
  'status.submoduleSummary=false',
] as const

/** Commands that compare a worktree's files with the index or a tree: each gets `--ignore-submodules=dirty`. */
const WORKTREE_READERS = new Set(['status', 'diff', 'diff-files', 'diff-index'])

/** The one flag `stageWorktree` gives `git add` (its pathspecs, nested repositories excluded, on stdin). */
export const STAGE_PATHSPECS = '--pathspec-from-file=-'

/** Where the subcommand is in an argument list (after `-c key=value`, `-C dir` and global flags); -1: none. */
export function subcommandIndex(args: readonly string[], from = 0): number {
  for (let i = from; i < args.length; i++) {
    const arg = args[i] ?? ''
    if (arg === '-c' || arg === '-C') i++
    else if (!arg.startsWith('-')) return i
  }
  return -1
}

/**
 * The arguments as git gets them: the rules above applied to the subcommand (and, for `for-each-repo`, to the
 * command it runs in each repository). A rule that cannot be applied is a programming error, thrown at once.
 */
export function guardedArgs(args: readonly string[]): string[] {
  const out = [...args]
  const at = subcommandIndex(out)
  if (at === -1) return out
  const sub = out[at]
  if (sub === 'for-each-repo') {
    const dash = out.indexOf('--', at)
    if (dash === -1) return out
    return [...out.slice(0, dash + 1), ...guardedArgs(out.slice(dash + 1))]
  }
  if (sub === 'add' && !out.includes(STAGE_PATHSPECS)) {
    throw new Error(
      'git add runs only through stageWorktree (src/git/stage.ts): it would go into nested repositories',
    )
  }
  if (sub && WORKTREE_READERS.has(sub)) {
    const kept = out.filter((arg, i) => i <= at || !arg.startsWith('--ignore-submodules'))
    const chosen = out.find((arg, i) => i > at && arg === '--ignore-submodules=all')
    kept.splice(at + 1, 0, chosen ?? '--ignore-submodules=dirty')
    return kept
  }
  return out
}

/** How long one git command may run when nothing else is said: long enough for any real work on a busy machine. */
export const DEFAULT_GIT_DEADLINE_MS = 10 * 60_000

/**
 * The deadline of one git call: `HARNESS_GIT_TIMEOUT` of the environment harness runs git with (a duration:
 * `90s`, `20m`; `0` is refused: never infinite), else `DEFAULT_GIT_DEADLINE_MS`.
 */
export function gitDeadlineMs(env: NodeJS.ProcessEnv): number {
  const text = env.HARNESS_GIT_TIMEOUT
  if (text === undefined || text.trim() === '') return DEFAULT_GIT_DEADLINE_MS
  const ms = parseDuration(text, { bareUnit: 's', flag: 'HARNESS_GIT_TIMEOUT' })
  if (ms <= 0) {
    throw new UsageError(
      'HARNESS_GIT_TIMEOUT must be longer than 0: every git call has a deadline',
      'unset it for the default (10m)',
      'INVALID_DURATION',
    )
  }
  return ms
}
