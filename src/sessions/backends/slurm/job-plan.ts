import * as z from 'zod/mini'
import { SESSION_ID_PATTERN } from '../../record/ids.js'

/** An absolute path that can be written in a script line: no NUL, no line break, no `..` part. */
const AbsolutePath = z.string().check(
  z.regex(/^\/[^\0\n\r]*$/, 'an absolute path on one line'),
  z.refine((path) => !hasDotDot(path)),
)

function hasDotDot(path: string): boolean {
  return path.split('/').includes('..')
}

/**
 * One run's job as harness plans it (docs/backends.md, "The job script"): what the script needs to know, every
 * value checked here before a byte of script is written. The agent's argv and harness's own variables are not
 * part of it: they go to files of the run's spool folder (spool.ts), read by the script as data.
 */
export const JobPlanSchema = z.strictObject({
  session: z.string().check(z.regex(SESSION_ID_PATTERN)),
  run: z.int().check(z.positive()),
  /** The run's folder in the spool: the bundle in, the argv, the results out. */
  runDir: AbsolutePath,
  /** Node-local scratch at the same path on every node (`slurm.scratch`); null: the job's $TMPDIR, or /tmp. */
  scratch: z.nullable(AbsolutePath),
  /** The session's branch, as `in.bundle` holds it (`refs/heads/<branch>`). */
  branch: z.string().check(
    z.regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/, 'a branch name'),
    z.refine((name) => !name.includes('..') && !name.endsWith('.lock') && !name.endsWith('/')),
  ),
  /** Where the agent starts, relative to the clone (the user's folder in the repository); '' for its top. */
  workRel: z.string().check(
    z.regex(/^(?:[^/\0\n\r][^\0\n\r]*)?$/, 'a relative path on one line'),
    z.refine((path) => !hasDotDot(path)),
  ),
  /** The bundle also holds `refs/harness/<session>/worktree`: the worktree's uncommitted files, restored as such. */
  worktreeState: z.boolean(),
  /** `agent-in.tar` holds the session's agent folder (HOME is its `home/`). */
  agentFiles: z.boolean(),
  /** The agent's PATH on the node; null keeps the job's own (the user's login environment there). */
  path: z.nullable(z.string().check(z.regex(/^[^\0\n\r]+$/))),
  /** The ceiling of each step of the setup and of sending the work back (clone, bundle, tar), in seconds. */
  stepSeconds: z.int().check(z.gte(10), z.lte(86_400)),
})
export type JobPlan = z.infer<typeof JobPlanSchema>
