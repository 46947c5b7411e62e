import { describe, expect, test } from 'vitest'
import { adoptSessions, mayDeleteBranch, NOT_SHOWN } from '../../../../src/sessions/control/adopt.js'
import type { SessionRecord } from '../../../../src/sessions/record/schema.js'
// The record's fields as zod described them: the meaning record/schema.ts is held to (shape.test.ts).
import { SessionRecordSchema } from '../../../fixtures/zod-record-schema.js'
import { fakeEnv, finishedRecord } from '../../../helpers/fake-env.js'

// adopt shows every field it will seal that harness acts on, and never seals a branch harness cannot prove it
// made as one it may delete (docs/security.md, "Adopt").

const yes = { all: false, yes: true, interactive: false, confirm: async () => true }
const foreign = (record: SessionRecord): SessionRecord => ({ ...record, sealed: false })

async function adopted(record: SessionRecord) {
  const { env, store } = fakeEnv({ records: [foreign(record)] })
  const result = await adoptSessions(env, record.id, yes)
  return { item: result.adopted[0], stored: store.get(record.id) }
}

describe('what adopt shows', () => {
  test('every field of the record schema is shown, or listed in NOT_SHOWN as one harness does not act on', async () => {
    const keys = Object.keys(SessionRecordSchema.shape)
    const base = foreign(finishedRecord('show0001'))
    for (const key of keys) {
      if ((NOT_SHOWN as readonly string[]).includes(key) || key === 'id') continue
      // A value of the right kind would do; what matters is that the field reaches what the user sees.
      const sentinel = `sentinel-of-${key}`
      const { env } = fakeEnv({ records: [{ ...base, [key]: sentinel } as SessionRecord] })
      const result = await adoptSessions(env, 'show0001', {
        ...yes,
        yes: false,
        interactive: true,
        confirm: async () => false,
      })
      expect(result.adopted[0]?.fields[key], `field "${key}" is sealed by adopt but not shown`).toBe(sentinel)
    }
  })

  test('NOT_SHOWN names only fields of the schema, and none harness acts on', () => {
    const keys = new Set(Object.keys(SessionRecordSchema.shape))
    for (const key of NOT_SHOWN) expect(keys.has(key), key).toBe(true)
    // Hiding a field is a decision to review here, never a side effect.
    expect([...NOT_SHOWN].sort()).toEqual(
      [
        'completed_at',
        'cost',
        'created_at',
        'files_modified',
        'log_error',
        'merged_at',
        'project',
        'prompt',
        'rev',
        'schema_version',
        'seal',
        'seal_key',
        'seal_problem',
        'sealed',
        'state',
        'task_hash',
        'updated_at',
      ].sort(),
    )
    // What harness acts on must never be hidden from the user who adopts.
    for (const acted of [
      'provider',
      'permission',
      'worktree_dir',
      'git_branch',
      'base_dir',
      'base_ref',
      'branch_created',
      'agent_session_id',
      'extra_args',
      'runs',
      'checkpoints',
      'tmux_session',
      'tmux_socket',
      'container',
      'backend',
      'status',
      'exit_code',
      'merged_head',
      'merge_commit',
      'stop_request',
      'metadata',
    ]) {
      expect(NOT_SHOWN as readonly string[], acted).not.toContain(acted)
    }
  })

  test('the tmux socket it seals is shown, and a field of a newer version is shown too', async () => {
    const { item } = await adopted(
      finishedRecord('tmux0001', {
        tmux_session: 'harness-tmux0001',
        tmux_socket: '/tmp/evil/socket',
        future_field: { run: 'this' },
      } as Partial<SessionRecord>),
    )
    expect(item?.fields).toMatchObject({
      tmux_session: 'harness-tmux0001',
      tmux_socket: '/tmp/evil/socket',
      future_field: { run: 'this' },
    })
    expect(item?.fields).not.toHaveProperty('prompt')
  })
})

describe('branch_created', () => {
  const record = (extra: Partial<SessionRecord>) =>
    finishedRecord('base0001', { branch_created: true, is_worktree: true, ...extra })

  test('kept only for harness/<id> that is not its own base', () => {
    expect(mayDeleteBranch(record({ git_branch: 'harness/base0001', base_ref: 'main' }))).toBe(true)
    expect(mayDeleteBranch(record({ git_branch: 'harness/base0001', base_ref: null }))).toBe(true)
    expect(mayDeleteBranch(record({ git_branch: 'feature', base_ref: 'main' }))).toBe(false)
    expect(mayDeleteBranch(record({ git_branch: 'harness/other001', base_ref: 'main' }))).toBe(false)
    expect(mayDeleteBranch(record({ git_branch: 'feature', base_ref: 'feature' }))).toBe(false)
    expect(
      mayDeleteBranch(record({ git_branch: 'harness/base0001', base_ref: 'refs/heads/harness/base0001' })),
    ).toBe(false)
    expect(mayDeleteBranch(record({ git_branch: 'harness/base0001', branch_created: false }))).toBe(false)
  })

  test("a record claiming the user's branch is sealed with branch_created false, and says so", async () => {
    const { item, stored } = await adopted(record({ git_branch: 'feature', base_ref: 'feature' }))
    expect(item).toMatchObject({ adopted: true, may_delete_branch: false })
    expect(item?.fields.branch_created).toBe(false)
    expect(stored).toMatchObject({ sealed: true, branch_created: false })
  })

  test('harness/<id> keeps it', async () => {
    const { item, stored } = await adopted(record({ git_branch: 'harness/base0001', base_ref: 'main' }))
    expect(item).toMatchObject({ adopted: true, may_delete_branch: true })
    expect(stored).toMatchObject({ sealed: true, branch_created: true })
  })
})
