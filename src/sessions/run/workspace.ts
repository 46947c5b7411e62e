import { dirname, join } from 'node:path'
import { type HarnessConfig, worktreeRoot, worktreeSetupCommand } from '../../config.js'
import { entryExists, makeDirs, setMode } from '../../disk/door.js'
import { ExitRequest, errorMessage, IllegalStateError, SessionNotFoundError } from '../../errors.js'
import type { ProjectPaths } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import type { Checkpoint, SessionRecord } from '../record/schema.js'
import type { VerifiedSession } from '../record/seal.js'
import { describeRecreation, planRecreation, putBackFiles, recreationFacts } from '../recreation.js'
import { planWorkspace, type WorkspaceFacts, type WorkspacePlan, type WorkspaceRequest } from './plan.js'
import { isDir } from './run-plan.js'
import { type SignalGuard, signalExit, throwIfSignalled } from './signal-guard.js'

export interface Workspace extends WorkspaceFacts {
  /** Removes what was made (worktree, branch) when the session never got its record. */
  undo: () => Promise<void>
}

/** The session's worktree (abortable with Ctrl-C), or the current directory when there is no usable repo. */
export async function prepareWorkspace(
  ctx: SessionEnv,
  paths: ProjectPaths,
  config: HarnessConfig,
  id: string,
  options: WorkspaceRequest,
  abort: SignalGuard,
): Promise<Workspace> {
  const { inspectRepo } = await import('../../git/repo.js')
  const gitEnv = { env: ctx.env }
  const repo = await inspectRepo(ctx.cwd, gitEnv)
  const plan = planWorkspace(options, repo, ctx.cwd, id, worktreeRoot(config, paths.root))
  if (plan.kind === 'plain') {
    if (plan.notice) ctx.notice(plan.notice)
    return {
      dir: plan.dir,
      isWorktree: false,
      branch: null,
      baseDir: plan.dir,
      baseCommit: plan.baseCommit,
      baseRef: null,
      subdir: null,
      undo: async () => {},
    }
  }
  const { resolveCommit } = await import('../../git/worktree.js')
  const baseCommit = plan.baseCommit ?? (await resolveCommit(plan.repoDir, plan.base, gitEnv))
  // The caller holds the session's set-up claim (`claimSetUp`): no other run makes this worktree meanwhile.
  return makeWorktree(ctx, config, plan, baseCommit, abort, paths.sessionsDir)
}

/** Makes the planned worktree and branch at `baseCommit`, then sets it up; undone if the set-up fails. */
async function makeWorktree(
  ctx: SessionEnv,
  config: HarnessConfig,
  plan: Extract<WorkspacePlan, { kind: 'worktree' }>,
  baseCommit: string,
  abort: SignalGuard,
  sessionsDir: string,
): Promise<Workspace> {
  const { repoDir, dir, branch } = plan
  // Anything at the new worktree's path, a link too (never followed), is in the way.
  if (entryExists(dir)) {
    throw new IllegalStateError(
      `worktree folder ${dir} already exists`,
      'remove it or choose another --session-id',
    )
  }
  try {
    const { createWorktree } = await import('../../git/worktree.js')
    // Prompts, agent output and copied secrets (.env) live there: 0700 like the rest of harness's folders.
    // The worktree root: the user may reach it through a link of their own (makeDirs follows it, not in .harness/).
    makeDirs(dirname(dir), 0o700)
    await sharedGitStep(sessionsDir, () =>
      createWorktree({
        repoDir,
        path: dir,
        branch,
        base: baseCommit,
        verifiedBase: true,
        signal: abort.signal,
        env: ctx.env,
      }),
    )
    setMode(dir, 0o700)
    const undo = () => sharedGitStep(sessionsDir, () => undoWorktree(ctx, repoDir, dir, branch, baseCommit))
    try {
      throwIfSignalled(abort)
      await setUpWorktree(ctx, config, plan.topLevel, dir, abort.signal)
      throwIfSignalled(abort)
    } catch (error) {
      await undo()
      throw error
    }
    return {
      dir,
      isWorktree: true,
      branch,
      baseDir: repoDir,
      baseCommit,
      baseRef: plan.baseRef,
      subdir: plan.subdir,
      undo,
    }
  } catch (error) {
    const sig = abort.received()
    throw sig && !(error instanceof ExitRequest) ? signalExit(sig) : error
  }
}

/**
 * Removes the worktree and branch a run made when it never got its record. A failed step leaves something
 * behind: say what, and go on undoing (docs/development/design.md, "Runs"); the branch goes only while it
 * still points where it was made, and not from under a worktree still there: never delete work.
 */
async function undoWorktree(
  ctx: SessionEnv,
  repoDir: string,
  dir: string,
  branch: string,
  baseCommit: string,
): Promise<void> {
  const { removeWorktree, deleteBranch } = await import('../../git/worktree.js')
  const leftBehind = (what: string) => (error: unknown) =>
    ctx.warn(`could not remove ${what}: ${errorMessage(error)}`)
  const removed = await removeWorktree(repoDir, dir, { force: true, env: ctx.env }).then(
    () => true,
    (error: unknown) => {
      leftBehind(`the worktree ${dir}`)(error)
      return false
    },
  )
  if (!removed) return ctx.warn(`kept the branch ${branch} with that worktree`)
  await deleteBranch(repoDir, branch, baseCommit, { dropConfig: true, env: ctx.env }).catch(
    leftBehind(`the branch ${branch}`),
  )
}

/** The lock of the steps all runs of the repository share; its name is no session id's (they begin with a letter or digit). */
const SHARED_GIT_LOCK = '_git-worktrees.lock'

/**
 * Runs `fn`, a step that reads or changes the worktree registrations that every run of the repository shares
 * (`git worktree add`, `remove`; docs/security.md, "Shared steps"), while no other run of this project does
 * one: `git worktree add` reads every registered worktree's admin folder, and a sibling's half-made one made
 * it fail (parallel runs failed each other at random, exit 5). Only the git step is held, never the set-up
 * command or the run, so the wait is short; a holder that died is found dead and its lock broken at once.
 */
export async function sharedGitStep<T>(sessionsDir: string, fn: () => Promise<T>): Promise<T> {
  const { withLock } = await import('../record/lock.js')
  return withLock(
    join(sessionsDir, SHARED_GIT_LOCK),
    { timeoutMs: SHARED_GIT_PATIENCE_MS, what: "this repository's worktree registrations" },
    fn,
  )
}

/** How long a run waits for the other runs' shared git steps (200 runs at once, each a fraction of a second). */
const SHARED_GIT_PATIENCE_MS = 300_000

/**
 * Runs `fn` (making or recreating the worktree of session `id`) while no other command does the same for it: a
 * loser's failed `git worktree add` would roll back, that is remove, the winner's worktree. A second command
 * is refused at once (exit 4); a lock left by a dead command is broken.
 */
export async function settingUp<T>(sessionsDir: string, id: string, fn: () => Promise<T>): Promise<T> {
  const claim = await claimSetUp(sessionsDir, id)
  try {
    return await fn()
  } finally {
    claim.release()
  }
}

/**
 * The claim on session `id`'s set-up (`sessions/<id>.worktree.lock`): a new run holds it from before it makes
 * anything until its record is committed, so that what it made, and what it undoes when it fails, is its own;
 * a second run with the same `--session-id` is refused at once (exit 4) and touches nothing. A lock left by a
 * dead command is broken.
 */
export async function claimSetUp(sessionsDir: string, id: string): Promise<{ release(): void }> {
  const { FileLock } = await import('../record/lock.js')
  const lock = FileLock.tryAcquire(join(sessionsDir, `${id}.worktree.lock`))
  if (!lock) {
    throw new IllegalStateError(
      `session "${id}" is being set up by another command`,
      undefined,
      'SESSION_BUSY',
    )
  }
  return lock
}

/** worktree.include files copied in, then worktree.setup run in the new worktree (its failure fails the run). */
async function setUpWorktree(
  ctx: SessionEnv,
  config: HarnessConfig,
  from: string,
  dir: string,
  signal: AbortSignal,
) {
  const include = config.worktree?.include ?? []
  if (include.length) {
    const { copyIncludedFiles } = await import('../../git/worktree.js')
    await copyIncludedFiles(from, dir, include, { env: ctx.env })
  }
  const setup = worktreeSetupCommand(config)
  if (!setup) return
  const { runSetupCommand } = await import('../../process/setup.js')
  ctx.notice(`harness: running worktree setup in ${dir}`)
  const { worktreeSetupSource } = await import('../../config.js')
  const file = worktreeSetupSource((await ctx.project()).configFile, ctx.env)
  await runSetupCommand(setup, dir, ctx.env, signal, (line) => ctx.notice(`setup| ${line}`), {
    file,
    streamed: ctx.quiet !== true,
  })
}

/**
 * Resume always runs inside the session's worktree: recreated from its branch if it was removed, with the files
 * of its latest checkpoint when that was taken on the branch's tip (what the run left uncommitted), or from
 * that checkpoint when the branch is gone too (sessions/recreation.ts decides; `session path` says the same).
 */
export async function ensureWorktree(
  ctx: SessionEnv,
  session: VerifiedSession<SessionRecord>,
  sessionsDir: string,
): Promise<void> {
  if (isDir(session.worktree_dir)) return
  const { id, worktree_dir: dir } = session
  const repoDir = session.base_dir ?? (await ctx.project()).root
  await settingUp(sessionsDir, id, async () => {
    if (isDir(dir)) return
    const plan = planRecreation(session, await recreationFacts(session, repoDir, ctx.env))
    if (plan.kind === 'none') {
      throw new IllegalStateError(
        `session "${id}" cannot be resumed: its worktree ${dir} is gone and ${plan.why}`,
        `snapshots of its work, if any, are under refs/harness/${id}/ ("git for-each-ref refs/harness/${id}/")`,
        session.is_worktree && session.git_branch ? 'BRANCH_MISSING' : 'WORKTREE_GONE',
      )
    }
    const worktree = await import('../../git/worktree.js')
    try {
      await sharedGitStep(sessionsDir, async () => {
        if (plan.kind === 'branch') {
          await worktree.recreateWorktree({ repoDir, path: dir, branch: plan.branch, env: ctx.env })
        } else {
          const base = plan.checkpoint.head
          await worktree.createWorktree({ repoDir, path: dir, branch: plan.branch, base, env: ctx.env })
        }
      })
      setMode(dir, 0o700)
    } catch (error) {
      // A cleanup that removed the session meanwhile makes git fail ("invalid reference"): say what happened.
      if (!(await ctx.store()).exists(id)) throw new SessionNotFoundError(id)
      throw error
    }
    const restore = plan.kind === 'branch' ? plan.restore : plan.checkpoint
    if (restore) await restoreFiles(ctx, id, dir, restore)
    ctx.notice(`harness: recreated worktree ${dir} ${describeRecreation(plan)}`)
  })
}

/** The files of a checkpoint put back into a worktree just made: a failure leaves it as made, and says how. */
async function restoreFiles(ctx: SessionEnv, id: string, dir: string, checkpoint: Checkpoint): Promise<void> {
  try {
    await putBackFiles(dir, checkpoint, { env: ctx.env, why: `resume ${id}` })
  } catch (error) {
    ctx.warn(
      `could not put back the files of checkpoint ${checkpoint.n} of session ${id} (${errorMessage(error)}): "harness session restore ${id} ${checkpoint.n}" tries again`,
    )
  }
}
