import { join, sep } from 'node:path'
import { ENV_NAME } from '../../../config.js'
import {
  ensureDir,
  entryExists,
  lstatOrNull,
  readText,
  realPath,
  removeFolderTree,
  setFileMode,
  setMode,
  writeFileNew,
} from '../../../disk/door.js'
import { IllegalStateError, UsageError } from '../../../errors.js'
import { SESSION_ID_PATTERN } from '../../record/ids.js'
import { RUN_FILES } from './job-script.js'

/**
 * The spool (SPEC §14): `slurm.spool`, a folder the submit host and every node see (the site's shared
 * filesystem). harness keeps a 0700 folder of the user's own in it (`harness-<uid>`), a folder per session in
 * that, and a folder per run in that; every file it writes there is 0600. What comes back from a job into it
 * was written by the agent's job: input (SPEC §10), read through the door, bounded, never followed.
 */
export interface Spool {
  /** `slurm.spool`, its real path. */
  root: string
  /** The user's own folder in it. */
  userDir: string
}

/**
 * The spool, checked: configured, absolute, an existing folder, outside the repository (the nodes must not
 * depend on the user's checkout, and a spool inside it would put the agent's results among the user's files);
 * the user's folder in it made 0700, or refused when it is not a real folder of theirs.
 */
export function openSpool(configured: string | undefined, repoDir: string | null): Spool {
  if (!configured) {
    throw new UsageError(
      'a Slurm session needs slurm.spool: a folder the submit host and the nodes both see',
      'harness config set slurm.spool /shared/scratch/you/harness-spool --user',
      'SLURM_SPOOL_MISSING',
    )
  }
  if (!configured.startsWith('/')) {
    throw new UsageError(
      `slurm.spool must be an absolute path: "${configured}"`,
      undefined,
      'SLURM_SPOOL_INVALID',
    )
  }
  let root: string
  try {
    root = realPath(configured)
  } catch {
    throw new UsageError(
      `slurm.spool ${configured} does not exist`,
      'make it on the shared filesystem',
      'SLURM_SPOOL_INVALID',
    )
  }
  if (!lstatOrNull(root)?.isDirectory()) {
    throw new UsageError(`slurm.spool ${configured} is not a folder`, undefined, 'SLURM_SPOOL_INVALID')
  }
  if (repoDir) {
    const repo = realPath(repoDir)
    if (root === repo || root.startsWith(repo + sep)) {
      throw new UsageError(
        `slurm.spool ${configured} is inside the repository ${repoDir}`,
        'choose a folder outside it, on the filesystem the nodes share',
        'SLURM_SPOOL_IN_REPOSITORY',
      )
    }
  }
  const userDir = join(root, `harness-${process.getuid?.() ?? 'user'}`)
  ownFolder(userDir)
  return { root, userDir }
}

/**
 * Makes `dir` (0700) or finds it, and insists it is a real folder of this user's, closed to everyone else
 * (a folder someone else made or opened up in a shared filesystem is refused: exit 4).
 */
function ownFolder(dir: string): void {
  ensureDir(dir, 0o700)
  const stat = lstatOrNull(dir)
  const uid = process.getuid?.()
  if (!stat?.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    throw new IllegalStateError(
      `${dir} is not a folder of your own${stat?.isSymbolicLink() ? ' (a symlink)' : ''}`,
      'remove it, or choose another slurm.spool',
      'SLURM_SPOOL_UNSAFE',
    )
  }
  if ((stat.mode & 0o077) !== 0) setMode(dir, 0o700)
}

/** A session's folder in the spool. */
export function sessionSpoolDir(spool: Spool, id: string): string {
  if (!SESSION_ID_PATTERN.test(id)) throw new UsageError(`invalid session id "${id}"`)
  return join(spool.userDir, id)
}

/** The folder of one run of a session: made empty (a leftover of an attempt that never ran is removed). */
export function makeRunDir(spool: Spool, id: string, run: number): string {
  const sessionDir = sessionSpoolDir(spool, id)
  ownFolder(sessionDir)
  const runDir = join(sessionDir, `run-${run}`)
  if (entryExists(runDir)) removeFolderTree(runDir)
  ownFolder(runDir)
  return runDir
}

/** What a run's job reads besides its bundle: the agent's argv, harness's own variables, the script. */
export interface RunInput {
  argv: readonly string[]
  /** harness's own variables for the agent (HARNESS_SESSION_ID, ...): never a secret (those go by name). */
  env: Readonly<Record<string, string>>
  script: string
}

/**
 * Writes a run's inputs into its folder, each file new and 0600: `argv` and `env` NUL-separated (read by the
 * script as data, never as shell), the script, and the empty log and message files Slurm then appends to. The
 * bundle and agent files already there (written by git and tar with the process's umask) are made 0600 too.
 */
export function stageRun(runDir: string, input: RunInput): void {
  if (input.argv.length === 0) throw new UsageError('no agent command to run')
  for (const arg of input.argv) {
    if (arg.includes('\0')) throw new UsageError('an argument of the agent holds a NUL byte')
  }
  const pairs = Object.entries(input.env).map(([name, value]) => {
    if (!ENV_NAME.test(name) || value.includes('\0')) throw new UsageError(`invalid variable "${name}"`)
    return `${name}=${value}`
  })
  writeFileNew(join(runDir, RUN_FILES.argv), nulJoined(input.argv))
  writeFileNew(join(runDir, RUN_FILES.env), nulJoined(pairs))
  writeFileNew(join(runDir, RUN_FILES.script), input.script)
  writeFileNew(join(runDir, RUN_FILES.log), '')
  writeFileNew(join(runDir, RUN_FILES.jobErr), '')
  for (const name of [RUN_FILES.bundleIn, RUN_FILES.agentIn]) {
    if (entryExists(join(runDir, name))) setFileMode(join(runDir, name), 0o600)
  }
}

function nulJoined(items: readonly string[]): string {
  return items.map((item) => `${item}\0`).join('')
}

/** What a run's job reported in the spool, each part null when it did not (yet). */
export interface RunReport {
  /** The node the job ran on (its hostname). */
  node: string | null
  /** The agent was started (an ISO time, UTC). */
  started: string | null
  /** The agent's exit code (128 + n for a signal): the truth of how it ended. */
  exitCode: number | null
  /** What ended it: itself (`exit`), harness's stop (`stop`), or a TERM before Slurm's time limit (`timeout`). */
  endedBy: 'exit' | 'stop' | 'timeout' | null
  /** Why the agent could not be started (the clone failed, ...). */
  setupError: string | null
  /** Written last: what the job sent back (`commits`: sent, none or failed; `uncommitted`: the commit). */
  sent: { commits: 'sent' | 'none' | 'failed'; uncommitted: string | null; agentFiles: boolean } | null
}

/** Reads a run's report; every file is the job's (the agent's) writing, so each is checked, never trusted. */
export function readRunReport(runDir: string): RunReport {
  const text = (name: string): string | null => {
    try {
      return readText(join(runDir, name), 'small').trim()
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
  }
  const code = text(RUN_FILES.exitCode)
  const endedBy = text(RUN_FILES.endedBy)
  const started = text(RUN_FILES.started)
  return {
    node: oneLine(text(RUN_FILES.node)),
    started: started && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(started) ? started : null,
    exitCode: code && /^\d{1,3}$/.test(code) && Number(code) <= 255 ? Number(code) : null,
    endedBy: endedBy === 'exit' || endedBy === 'stop' || endedBy === 'timeout' ? endedBy : null,
    setupError: oneLine(text(RUN_FILES.setupError)),
    sent: parseSent(text(RUN_FILES.sent)),
  }
}

function oneLine(text: string | null): string | null {
  return text === null ? null : (text.split('\n')[0] ?? '').slice(0, 500)
}

function parseSent(text: string | null): RunReport['sent'] {
  if (text === null) return null
  const fields = new Map<string, string>()
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).trim())
  }
  const commits = fields.get('commits')
  const uncommitted = fields.get('uncommitted') ?? ''
  return {
    commits: commits === 'sent' || commits === 'none' ? commits : 'failed',
    uncommitted: /^[0-9a-f]{40,64}$/.test(uncommitted) ? uncommitted : null,
    agentFiles: fields.get('agent_files') === 'sent',
  }
}

/** Removes a session's folder from the spool (held while emptied: a link planted in it is removed as a link). */
export function removeSessionSpool(spool: Spool, id: string): void {
  const dir = sessionSpoolDir(spool, id)
  if (entryExists(dir)) removeFolderTree(dir)
}
