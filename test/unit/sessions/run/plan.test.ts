import { describe, expect, it } from 'vitest'
import type { RepoInfo } from '../../../../src/git/repo.js'
import { parseSessionRecord } from '../../../../src/sessions/record/schema.js'
import { taskHash } from '../../../../src/sessions/record/task.js'
import {
  newSessionRecord,
  planWorkspace,
  resumeRefusal,
  sessionIdClash,
  type WorkspaceFacts,
} from '../../../../src/sessions/run/plan.js'

// What `harness run` decides before it makes anything: where the session runs and its first record. The
// worktrees and records themselves are made in the e2e tests (run.test.ts).

const HEAD = 'a'.repeat(40)
const repo = (more: Partial<Extract<RepoInfo, { isRepo: true }>> = {}): RepoInfo => ({
  isRepo: true,
  topLevel: '/src/app',
  mainRoot: '/src/app',
  commonDir: '/src/app/.git',
  hasCommits: true,
  head: HEAD,
  branch: 'main',
  relativeCwd: '',
  ...more,
})
const worktree = { worktree: true }
const ROOT = '/src/app/.harness/worktrees'

describe('planWorkspace', () => {
  it('makes a worktree on harness/<id> from HEAD, already known in the main worktree', () => {
    expect(planWorkspace(worktree, repo(), '/src/app', 'ab12cd34', ROOT)).toEqual({
      kind: 'worktree',
      repoDir: '/src/app',
      topLevel: '/src/app',
      dir: '/src/app/.harness/worktrees/ab12cd34',
      branch: 'harness/ab12cd34',
      baseCommit: HEAD,
      base: 'HEAD',
      baseRef: 'main',
      subdir: null,
    })
  })

  it('names --base and --branch as given; a named base is resolved later, and is the base_ref', () => {
    const plan = planWorkspace(
      { worktree: true, base: 'v1.2', branch: 'fix/x' },
      repo(),
      '/src/app',
      'id1',
      ROOT,
    )
    expect(plan).toMatchObject({
      kind: 'worktree',
      branch: 'fix/x',
      base: 'v1.2',
      baseCommit: null,
      baseRef: 'v1.2',
    })
  })

  it('from a linked worktree: the main worktree makes it and resolves its HEAD; the subdirectory is kept', () => {
    const linked = repo({ topLevel: '/src/app-wt', mainRoot: '/src/app', relativeCwd: 'pkg/api' })
    expect(planWorkspace(worktree, linked, '/src/app-wt/pkg/api', 'id1', ROOT)).toMatchObject({
      kind: 'worktree',
      repoDir: '/src/app',
      topLevel: '/src/app-wt',
      baseCommit: null,
      base: 'HEAD',
      subdir: 'pkg/api',
    })
  })

  it('a detached HEAD records no base_ref; a bare common dir falls back to the top level', () => {
    const plan = planWorkspace(worktree, repo({ branch: null, mainRoot: null }), '/src/app', 'id1', ROOT)
    expect(plan).toMatchObject({ repoDir: '/src/app', baseRef: null })
  })

  it('--no-worktree runs in the current directory, with HEAD as base commit', () => {
    expect(planWorkspace({ worktree: false }, repo(), '/src/app/pkg', 'id1', ROOT)).toEqual({
      kind: 'plain',
      dir: '/src/app/pkg',
      baseCommit: HEAD,
      notice: null,
    })
  })

  it('outside a repository, or in one without commits, runs in the current directory and says why', () => {
    const outside = planWorkspace(worktree, { isRepo: false }, '/tmp/x', 'id1', ROOT)
    expect(outside).toMatchObject({ kind: 'plain', dir: '/tmp/x', baseCommit: null })
    expect(outside.kind === 'plain' && outside.notice).toMatch(/not a git repository: session id1 runs/)
    const empty = planWorkspace(worktree, repo({ hasCommits: false, head: null }), '/src/app', 'id1', ROOT)
    expect(empty).toMatchObject({ kind: 'plain', baseCommit: null })
    expect(empty.kind === 'plain' && empty.notice).toMatch(/no commits yet/)
  })

  it('refuses --base and --branch where there is nothing to branch from', () => {
    expect(() => planWorkspace({ worktree: true, base: 'x' }, { isRepo: false }, '/t', 'i', ROOT)).toThrow(
      '--base and --branch need a git repository',
    )
    expect(() =>
      planWorkspace(
        { worktree: true, branch: 'b' },
        repo({ hasCommits: false, head: null }),
        '/t',
        'i',
        ROOT,
      ),
    ).toThrow('--base and --branch need a repository with commits')
  })
})

describe('newSessionRecord', () => {
  const inWorktree: WorkspaceFacts = {
    dir: '/src/app/.harness/worktrees/ab12cd34',
    isWorktree: true,
    branch: 'harness/ab12cd34',
    baseDir: '/src/app',
    baseCommit: HEAD,
    baseRef: 'main',
    subdir: 'pkg',
  }
  const base = {
    id: 'ab12cd34',
    provider: 'claude',
    permission: 'supervised' as const,
    workspace: inWorktree,
    prompt: 'fix the tests',
    model: undefined,
    extraArgs: ['--verbose'],
    agentSessionId: 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6',
    contextFrom: [],
    tmux: null,
    metadata: { os: 'linux', hostname: 'h' },
    now: new Date('2026-01-02T03:04:05.000Z'),
  }

  it('is a RUNNING record of its workspace with no runs yet, valid against the schema', () => {
    const record = newSessionRecord(base)
    expect(record).toMatchObject({
      id: 'ab12cd34',
      provider: 'claude',
      permission: 'supervised',
      status: 'RUNNING',
      worktree_dir: inWorktree.dir,
      is_worktree: true,
      git_branch: 'harness/ab12cd34',
      branch_created: true,
      base_dir: '/src/app',
      base_commit: HEAD,
      base_ref: 'main',
      start_subdir: 'pkg',
      prompt: 'fix the tests',
      task_hash: taskHash('fix the tests'),
      model: null,
      extra_args: ['--verbose'],
      agent_session_id: base.agentSessionId,
      created_at: '2026-01-02T03:04:05.000Z',
      updated_at: '2026-01-02T03:04:05.000Z',
      completed_at: null,
      rev: 0,
      runs: [],
      checkpoints: [],
      files_modified: [],
      stop_request: null,
    })
    expect(record).not.toHaveProperty('context_from')
    expect(record).not.toHaveProperty('tmux_session')
    expect(parseSessionRecord(record).ok).toBe(true)
  })

  it('without a worktree: no branch, none created; without a prompt: no task hash', () => {
    const record = newSessionRecord({
      ...base,
      prompt: undefined,
      workspace: { ...inWorktree, isWorktree: false, branch: null, dir: '/src/app', subdir: null },
    })
    expect(record).toMatchObject({ git_branch: null, branch_created: false, prompt: null, task_hash: null })
  })

  it('names the sessions of --context-from and the tmux session it is hosted in', () => {
    const record = newSessionRecord({
      ...base,
      contextFrom: ['11111111'],
      tmux: { socket: '/tmp/tmux-0/harness', session: 'harness-ab12cd34' },
    })
    expect(record).toMatchObject({
      context_from: ['11111111'],
      tmux_session: 'harness-ab12cd34',
      tmux_socket: '/tmp/tmux-0/harness',
      state: null,
    })
    expect(parseSessionRecord(record).ok).toBe(true)
  })
})

describe('resumeRefusal (run --session-id of an existing session)', () => {
  const plain = { worktree: true, extraArgs: [] }

  it('resumes when no flag would change the session', () => {
    expect(resumeRefusal('ab12cd34', plain)).toBeNull()
  })

  it('names every flag that would change its agent, model, permission or worktree', () => {
    const refusal = resumeRefusal('ab12cd34', {
      agent: 'codex',
      model: 'm',
      permission: 'readonly',
      base: 'main',
      branch: 'b',
      worktree: false,
      extraArgs: ['-x'],
    })
    expect(refusal?.message).toBe(
      'session "ab12cd34" exists, so --session-id resumes it: --agent, --model, --permission, --base, --branch, --no-worktree, arguments after -- cannot change it',
    )
    expect(refusal?.exitCode).toBe(2)
  })

  it('refuses --context-from, which only starts new sessions', () => {
    expect(resumeRefusal('ab12cd34', { ...plain, contextFrom: ['11111111'] })?.message).toMatch(
      /--context-from only starts new sessions/,
    )
  })
})

describe('sessionIdClash (run --session-id of a new id)', () => {
  const ids = ['918fa2b3', '918fc0de', '3f9a12c8', 'tidy-docs']

  it('refuses a prefix of an existing id, naming the match (exit 4)', () => {
    expect(sessionIdClash('3f9a', ids, null)).toMatchObject({
      exitCode: 4,
      code: 'SESSION_ID_CLASH',
      message:
        '--session-id "3f9a" is a prefix of session 3f9a12c8: a new session "3f9a" would be what "3f9a" reaches from then on',
      hint: 'to resume it, give its whole id (--session-id 3f9a12c8); else choose another id',
    })
    expect(sessionIdClash('918f', ids, null)?.message).toContain('prefix of sessions 918fa2b3, 918fc0de')
    expect(sessionIdClash('tidy', ids, null)?.message).toContain('prefix of session tidy-docs')
  })

  it("refuses a session's name, naming the session", () => {
    expect(sessionIdClash('auth', ids, '3f9a12c8')).toMatchObject({
      exitCode: 4,
      message: '--session-id "auth" is the name of session 3f9a12c8',
    })
  })

  it('allows a new id that reaches no other session: unrelated, longer than an id, or too short to be a prefix', () => {
    expect(sessionIdClash('release-1', ids, null)).toBeNull()
    expect(sessionIdClash('918fa2b3-retry', ids, null)).toBeNull()
    expect(sessionIdClash('918', ids, null)).toBeNull()
  })
})
