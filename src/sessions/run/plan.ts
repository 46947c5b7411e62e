import { join, resolve } from 'node:path'
import { IllegalStateError, UsageError } from '../../errors.js'
import type { RepoInfo } from '../../git/repo.js'
import type { Permission } from '../../providers/schema.js'
import { MIN_PREFIX_LENGTH } from '../record/ids.js'
import { SCHEMA_VERSION, type SessionRecord } from '../record/schema.js'
import { taskHash } from '../record/task.js'

/*
 * The decisions of `harness run` that need no process, file or clock of their own
 * (docs/development/design.md, "Runs and the supervisor"): where the session runs and what its first record
 * holds. start.ts does the work around them.
 */

/** Where a new session runs, decided from the repository around the current directory. */
export type WorkspacePlan =
  | {
      kind: 'plain'
      /** The current directory, where the agent runs. */
      dir: string
      /** HEAD when the directory is in a repository with commits (checkpoints and diffs start there). */
      baseCommit: string | null
      /** Said on stderr: why there is no worktree although one was asked for. */
      notice: string | null
    }
  | {
      kind: 'worktree'
      /** The main worktree's top: where git makes the worktree and the branch. */
      repoDir: string
      /** The top of the worktree harness runs in (`worktree.include` copies from there). */
      topLevel: string
      dir: string
      branch: string
      /** The base commit when already known (HEAD of the main worktree); null: resolve `base` first. */
      baseCommit: string | null
      /** What `--base` named, or HEAD. */
      base: string
      /** Recorded as `base_ref`: --base, else the branch harness was run on (null when detached). */
      baseRef: string | null
      /** The current directory relative to the top, where the agent starts in the worktree. */
      subdir: string | null
    }

export interface WorkspaceRequest {
  worktree: boolean
  base?: string
  branch?: string
}

/**
 * Where session `id` runs: a new worktree under `worktreeRoot` on a new branch, or (`--no-worktree`, outside a
 * repository, in one without commits) the current directory. `--base`/`--branch` without a repository with
 * commits are a usage error.
 */
export function planWorkspace(
  request: WorkspaceRequest,
  repo: RepoInfo,
  cwd: string,
  id: string,
  worktreeRoot: string,
): WorkspacePlan {
  const here = resolve(cwd)
  const head = repo.isRepo && repo.hasCommits ? repo.head : null
  const plain = (notice: string | null): WorkspacePlan => ({
    kind: 'plain',
    dir: here,
    baseCommit: head,
    notice,
  })
  if (!request.worktree) return plain(null)
  if (!repo.isRepo) {
    if (request.base || request.branch) throw new UsageError('--base and --branch need a git repository')
    return plain(`harness: not a git repository: session ${id} runs in the current directory`)
  }
  if (!repo.hasCommits) {
    if (request.base || request.branch) {
      throw new UsageError('--base and --branch need a repository with commits')
    }
    return plain(`harness: the repository has no commits yet: session ${id} runs in the current directory`)
  }
  const repoDir = repo.mainRoot ?? repo.topLevel
  return {
    kind: 'worktree',
    repoDir,
    topLevel: repo.topLevel,
    dir: join(worktreeRoot, id),
    branch: request.branch ?? `harness/${id}`,
    // The default base is HEAD of the main worktree: already resolved when harness runs there.
    baseCommit: request.base === undefined && repo.head && repo.topLevel === repoDir ? repo.head : null,
    base: request.base ?? 'HEAD',
    baseRef: request.base ?? repo.branch ?? null,
    subdir: repo.relativeCwd || null,
  }
}

/** Where a new session's agent runs, once the workspace exists. */
export interface WorkspaceFacts {
  dir: string
  isWorktree: boolean
  branch: string | null
  baseDir: string
  baseCommit: string | null
  baseRef: string | null
  subdir: string | null
}

export interface NewSession {
  id: string
  /** `run --name`. */
  name?: string
  provider: string
  permission: Permission
  workspace: WorkspaceFacts
  /** The user's prompt (recorded, hashed); the context block of --context-from is not part of it. */
  prompt: string | undefined
  model: string | undefined
  extraArgs: string[]
  agentSessionId: string | undefined
  /** Sessions whose context block went before the prompt. */
  contextFrom: string[]
  /** The tmux server and session of a run hosted in tmux (docs/tmux.md). */
  tmux: { socket: string; session: string } | null
  /** Host, OS and versions (`metadata`). */
  metadata: Record<string, string | null>
  now: Date
}

/** The record a new session is created with (docs/record.md), before its first run is added. */
export function newSessionRecord(session: NewSession): SessionRecord {
  const { workspace } = session
  const at = session.now.toISOString()
  return {
    id: session.id,
    ...(session.name ? { name: session.name } : {}),
    provider: session.provider,
    permission: session.permission,
    status: 'RUNNING',
    worktree_dir: workspace.dir,
    is_worktree: workspace.isWorktree,
    git_branch: workspace.branch,
    // Made by this run (createWorktree fails on an existing branch): only then may removal delete it.
    branch_created: workspace.isWorktree && workspace.branch !== null,
    base_dir: workspace.baseDir,
    pid: null,
    exit_code: null,
    prompt: session.prompt ?? null,
    created_at: at,
    updated_at: at,
    completed_at: null,
    schema_version: SCHEMA_VERSION,
    rev: 0,
    model: session.model ?? null,
    task_hash: session.prompt ? taskHash(session.prompt) : null,
    base_commit: workspace.baseCommit,
    base_ref: workspace.baseRef,
    start_subdir: workspace.subdir,
    extra_args: session.extraArgs,
    agent_session_id: session.agentSessionId ?? null,
    stop_reason: null,
    stop_request: null,
    runs: [],
    checkpoints: [],
    files_modified: [],
    metadata: session.metadata,
    ...(session.contextFrom.length ? { context_from: session.contextFrom } : {}),
    ...(session.tmux
      ? { tmux_session: session.tmux.session, tmux_socket: session.tmux.socket, state: null }
      : {}),
  }
}

/**
 * Why `run --session-id <id>` may not make a new session of that id, or null: `id` is a session's name, or a
 * prefix of at least MIN_PREFIX_LENGTH characters of existing ids, which from then on would reach the new session
 * (an exact id wins) instead of theirs. `ids`: the ids on record; `named`: the session whose name `id` is.
 */
export function sessionIdClash(
  id: string,
  ids: readonly string[],
  named: string | null,
): IllegalStateError | null {
  if (named !== null) {
    return new IllegalStateError(
      `--session-id "${id}" is the name of session ${named}`,
      `resume that one with "harness session resume ${id}", or choose another id`,
      'SESSION_ID_CLASH',
    )
  }
  if (id.length < MIN_PREFIX_LENGTH) return null
  const prefixed = ids.filter((other) => other !== id && other.startsWith(id)).sort()
  if (prefixed.length === 0) return null
  return new IllegalStateError(
    `--session-id "${id}" is a prefix of session${prefixed.length > 1 ? 's' : ''} ${prefixed.join(', ')}: a new session "${id}" would be what "${id}" reaches from then on`,
    prefixed.length === 1
      ? `to resume it, give its whole id (--session-id ${prefixed[0]}); else choose another id`
      : 'to resume one, give its whole id; else choose another id',
    'SESSION_ID_CLASH',
  )
}

/** The flags of `harness run` that a resume through --session-id looks at. */
export interface ResumeFlags {
  agent?: string
  model?: string
  permission?: Permission
  base?: string
  branch?: string
  worktree: boolean
  extraArgs: string[]
  contextFrom?: string[]
  name?: string
}

/**
 * Why `run --session-id <id>` of an existing session cannot resume it, or null: the session keeps its agent,
 * model, permission and worktree, so flags that would change them are refused, and --context-from only starts
 * new sessions.
 */
export function resumeRefusal(id: string, flags: ResumeFlags): UsageError | null {
  const ignored = [
    flags.agent !== undefined && '--agent',
    flags.model !== undefined && '--model',
    flags.permission !== undefined && '--permission',
    flags.base !== undefined && '--base',
    flags.branch !== undefined && '--branch',
    !flags.worktree && '--no-worktree',
    flags.extraArgs.length > 0 && 'arguments after --',
    flags.name !== undefined && '--name',
  ].filter(Boolean)
  if (ignored.length) {
    return new UsageError(
      `session "${id}" exists, so --session-id resumes it: ${ignored.join(', ')} cannot change it`,
      'drop them, or choose a new --session-id',
    )
  }
  if (flags.contextFrom?.length) {
    return new UsageError(
      `session "${id}" exists, so --session-id resumes it: --context-from only starts new sessions`,
      'choose a new --session-id',
    )
  }
  return null
}
