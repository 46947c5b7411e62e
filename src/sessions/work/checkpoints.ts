import { dirname, join } from 'node:path'
import { pathExists } from '../../disk/door.js'
import { IllegalStateError, UsageError } from '../../errors.js'
import * as git from '../../git/checkpoint.js'
import { hasCommit } from '../../git/common.js'
import { readWorktreeState, type WorktreeState } from '../../git/snapshot.js'
import { readerOf, refuseWhileRunning } from '../backends/index.js'
import { sessionGitPlace } from '../git-place.js'
import type { SessionEnv, RecordStore as SessionStore } from '../ports.js'
import { getSession } from '../query/query.js'
import { FileLock } from '../record/lock.js'
import type { Checkpoint, CheckpointTrigger, SessionRecord } from '../record/schema.js'
import { assertSealed, type VerifiedSession, verifiedSession } from '../record/seal.js'

/** Where a session's checkpoints live in git (removed with the session; see docs/continuity.md). */
export function checkpointRef(id: string, n: number): string {
  return `refs/harness/${id}/checkpoints/${n}`
}

export interface TakeCheckpointOptions {
  trigger: CheckpointTrigger
  message?: string
  /** Interval and run-end checkpoints: nothing is taken when the worktree is as the last checkpoint left it. */
  onlyIfChanged?: boolean
  /** The environment git runs with (the session's, never this process's). */
  env: NodeJS.ProcessEnv
  /** The project's top: a session's repository when its record names none. */
  projectRoot: string
  /** When it is taken: the caller's clock (a service's is its port's). */
  now: Date
  /**
   * The session's worktree as already read (`readWorktreeState` of its worktree_dir): at the end of a run it is
   * read once for both this checkpoint and `files_modified`.
   */
  state?: WorktreeState
  /** Gives up (a run's end that a stop asked to finish). */
  signal?: AbortSignal
}

export interface TakenCheckpoint {
  id: string
  /** null when onlyIfChanged found nothing new. */
  checkpoint: Checkpoint | null
}

/** The folder a session's checkpoints are taken from; a session outside git or without its worktree has none. */
function checkpointDir(session: VerifiedSession<SessionRecord>): string {
  if (!session.base_commit) {
    throw new IllegalStateError(
      `session "${session.id}" has no checkpoints: it did not run in a git repository with commits`,
      undefined,
      'NO_GIT',
    )
  }
  const dir = session.worktree_dir
  if (session.is_worktree && !pathExists(join(dir, '.git'))) {
    throw new IllegalStateError(
      `the worktree of session "${session.id}" is gone: ${dir}`,
      `"harness session resume ${session.id}" recreates it from its branch`,
      'WORKTREE_MISSING',
    )
  }
  if (!pathExists(dir)) {
    throw new IllegalStateError(
      `the directory of session "${session.id}" is gone: ${dir}`,
      undefined,
      'WORKTREE_MISSING',
    )
  }
  return dir
}

/**
 * The most interval checkpoints a session keeps as checkpoints of their own (docs/continuity.md, "How many are
 * kept"): each is about 400 bytes of its record, which must stay readable (1 MiB). Past them, a new interval
 * checkpoint moves the newest one forward when that one is an interval checkpoint too (`folded` counts how
 * many it holds), so that numbers stay consecutive, every ref names its recorded commit, and the latest state is
 * always the newest checkpoint. Manual, run-end and before-restore checkpoints are always added.
 */
export const MAX_INTERVAL_CHECKPOINTS = 200

/** The checkpoint a new one folds into (the newest, past the cap), or null when it is added. */
function foldsInto(existing: readonly Checkpoint[], trigger: CheckpointTrigger): Checkpoint | null {
  const last = existing[existing.length - 1]
  if (trigger !== 'interval' || last?.trigger !== 'interval') return null
  let interval = 0
  for (const checkpoint of existing) if (checkpoint.trigger === 'interval') interval++
  return interval >= MAX_INTERVAL_CHECKPOINTS ? last : null
}

/** Checkpoints of one session are numbered under this lock, so a manual one and an interval one never collide. */
async function withCheckpointLock<T>(store: SessionStore, id: string, fn: () => Promise<T>): Promise<T> {
  // Long: the holder may be hashing a large worktree.
  const lock = await FileLock.acquire(join(store.dir, `${id}.checkpoint.lock`), {
    what: `checkpoints of session "${id}"`,
    timeoutMs: 120_000,
  })
  try {
    return await fn()
  } finally {
    lock.release()
  }
}

/**
 * Takes a checkpoint of a session's worktree: a commit of its complete state under
 * refs/harness/<id>/checkpoints/<n>, listed in the record. Only reads the worktree (allowed while RUNNING).
 */
export async function takeCheckpoint(
  store: SessionStore,
  id: string,
  options: TakeCheckpointOptions,
): Promise<TakenCheckpoint> {
  // Temporary indexes under `.harness/tmp/` (the store is `.harness/sessions`), never in $TMPDIR.
  const gitOptions = { env: options.env, tempDir: join(dirname(store.dir), 'tmp'), signal: options.signal }
  return withCheckpointLock(store, id, async () => {
    const session = store.get(id)
    if (!session) throw new IllegalStateError(`session "${id}" no longer exists`, undefined, 'SESSION_GONE')
    // A record harness did not seal may name any folder: never write refs for it (docs/security.md).
    const verified = assertSealed(session)
    const dir = checkpointDir(verified)
    const existing = session.checkpoints ?? []
    const last = existing[existing.length - 1]
    // A run's end hands over the worktree as it read it: one never changed since the base writes nothing, and
    // needs no git to say so (the place is checked before anything is written or read again).
    const given = options.state
    const untouched = given && given.head === session.base_commit && given.headTree === given.tree
    if (options.onlyIfChanged && !last && untouched) return { id, checkpoint: null }
    await sessionGitPlace(verified, options.env, options.projectRoot)
    const state = options.state ?? (await readWorktreeState(dir, gitOptions))
    if (options.onlyIfChanged) {
      const unchanged = last
        ? (last.head ?? null) === state.head &&
          (await git.treeIfPresent(state.topLevel, last.commit, gitOptions)) === state.tree
        : state.head === session.base_commit && state.headTree === state.tree
      if (unchanged) return { id, checkpoint: null }
    }
    // Past the cap, an interval checkpoint moves the newest one forward instead of adding one (folding).
    const fold = foldsInto(existing, options.trigger)
    const n = fold ? fold.n : existing.length
    const previous = fold ? existing[existing.length - 2] : last
    const ref = checkpointRef(id, n)
    const message = options.message?.trim() || defaultMessage(options.trigger, n)
    // A ref no record lists was left by a crash between storing it and recording it: it is reused. A folded
    // checkpoint's ref is moved to the new commit the same way.
    const made = await git.commitCheckpoint({
      worktreeDir: dir,
      ref,
      message,
      state,
      previous: previous?.commit ?? null,
      overwrite: true,
      ...gitOptions,
    })
    const checkpoint: Checkpoint = {
      n,
      ref,
      commit: made.commit,
      head: made.head,
      message,
      created_at: options.now.toISOString(),
      trigger: options.trigger,
      files_changed: made.filesChanged,
      tokens_used: null,
      ...(fold ? { folded: (fold.folded ?? 0) + 1 } : {}),
    }
    await store.update(id, (current) => ({
      ...current,
      checkpoints: [...(current.checkpoints ?? []).filter((c) => c.n !== n), checkpoint],
    }))
    return { id, checkpoint }
  })
}

function defaultMessage(trigger: CheckpointTrigger, n: number): string {
  switch (trigger) {
    case 'manual':
      return `checkpoint ${n}`
    case 'interval':
      return `interval checkpoint ${n}`
    case 'run-end':
      return `end of run (checkpoint ${n})`
    case 'before-restore':
      return `before restore (checkpoint ${n})`
  }
}

/** A checkpoint of a session by its number (as `session checkpoints` lists them). */
function findCheckpoint(session: SessionRecord, nText: string | number): Checkpoint {
  const n = typeof nText === 'number' ? nText : Number(nText)
  if (!Number.isInteger(n) || n < 0 || (typeof nText === 'string' && !/^\d+$/.test(nText))) {
    throw new UsageError(
      `invalid checkpoint number "${nText}"`,
      `see "harness session checkpoints ${session.id}"`,
    )
  }
  const checkpoint = session.checkpoints?.find((c) => c.n === n)
  if (!checkpoint) {
    throw new UsageError(
      `session "${session.id}" has no checkpoint ${n}`,
      session.checkpoints?.length
        ? `its checkpoints are 0..${session.checkpoints.length - 1}: "harness session checkpoints ${session.id}"`
        : `it has none yet: "harness session checkpoint ${session.id}" takes one`,
      'CHECKPOINT_NOT_FOUND',
    )
  }
  return checkpoint
}

export interface RestoreOutcome {
  id: string
  restored: Checkpoint
  /** The checkpoint of the state just before the restore (undo: restore this one). */
  before: Checkpoint | null
  head: string | null
  removed: string[]
  kept: string[]
}

/**
 * Puts a session's worktree back at checkpoint `n`. Refused while RUNNING. The state before is checkpointed
 * first (`before-restore`), so every restore can be undone by restoring that one.
 */
export async function restoreSessionCheckpoint(
  store: SessionStore,
  session: VerifiedSession<SessionRecord>,
  nText: string | number,
  options: { env: NodeJS.ProcessEnv; projectRoot: string; now: Date },
): Promise<RestoreOutcome> {
  const id = session.id
  assertNotRunning(session, 'restore')
  const target = findCheckpoint(session, nText)
  const dir = checkpointDir(session)
  // Its .git must still name its own registration: else git would reset another checkout's branch and index.
  await sessionGitPlace(session, options.env, options.projectRoot)
  const gitOptions = { env: options.env, tempDir: join(dirname(store.dir), 'tmp') }
  if (!(await hasCommit(dir, target.commit, gitOptions))) {
    throw new IllegalStateError(
      `checkpoint ${target.n} of session "${id}" points at commit ${target.commit}, which is not in the repository`,
      `"harness session recover --scan" checks every checkpoint`,
      'CHECKPOINT_MISSING',
    )
  }
  const taken = await takeCheckpoint(store, id, {
    trigger: 'before-restore',
    message: `before restoring checkpoint ${target.n}`,
    env: options.env,
    projectRoot: options.projectRoot,
    now: options.now,
  })
  // Re-checked after the before-restore checkpoint: a resume may have started meanwhile.
  const current = store.get(id)
  if (current) assertNotRunning(current, 'restore')
  await sessionGitPlace(session, options.env, options.projectRoot)
  const result = await git.restoreCheckpoint(dir, target.commit, {
    ...gitOptions,
    reflogMessage: `harness: restore checkpoint ${target.n} of session ${id}`,
  })
  return {
    id,
    restored: target,
    before: taken.checkpoint,
    head: result.head,
    removed: result.removed,
    kept: result.kept,
  }
}

export function assertNotRunning(session: SessionRecord, what: string): void {
  if (session.status !== 'RUNNING') return
  throw new IllegalStateError(
    `cannot ${what} session "${session.id}": it is running`,
    `stop it first: "harness session kill ${session.id}" (or wait: "harness session wait ${session.id}")`,
    'SESSION_RUNNING',
  )
}

/** The longest message `session checkpoint -m` takes. */
const MAX_MESSAGE_CHARS = 4000

/** `harness session checkpoint <id>`: a manual checkpoint (also while the session runs). */
export async function checkpointSession(
  ctx: SessionEnv,
  input: string,
  message?: string,
): Promise<TakenCheckpoint> {
  // Each message is kept in the record, which must stay readable: a page of text, not a file's worth.
  if (message !== undefined && message.length > MAX_MESSAGE_CHARS) {
    throw new UsageError(
      `--description is ${message.length} characters: a checkpoint's message is at most ${MAX_MESSAGE_CHARS}`,
      'say what the checkpoint is in a line or two; longer notes belong in a file of the worktree',
      'MESSAGE_TOO_LONG',
    )
  }
  const session = await getSession(ctx, input)
  if (session.status === 'RUNNING' || session.unsettled) {
    refuseWhileRunning(await readerOf(session), 'checkpoint')
  }
  const { root } = await ctx.project()
  return takeCheckpoint(await ctx.store(), session.id, {
    trigger: 'manual',
    message,
    env: ctx.env,
    projectRoot: root,
    now: new Date(ctx.clock.now()),
  })
}

export interface CheckpointList {
  id: string
  checkpoints: Checkpoint[]
}

/** `harness session checkpoints <id>`. */
export async function listSessionCheckpoints(ctx: SessionEnv, input: string): Promise<CheckpointList> {
  const session = await getSession(ctx, input)
  return { id: session.id, checkpoints: session.checkpoints ?? [] }
}

/** `harness session restore <id> <n>`. */
export async function restoreSession(ctx: SessionEnv, input: string, n: string): Promise<RestoreOutcome> {
  const session = verifiedSession(await getSession(ctx, input), 'restores its worktree')
  const { root } = await ctx.project()
  return restoreSessionCheckpoint(await ctx.store(), session, n, {
    env: ctx.env,
    projectRoot: root,
    now: new Date(ctx.clock.now()),
  })
}
