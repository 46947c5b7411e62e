import { describe, expect, test } from 'vitest'
import { completionSources } from '../../../src/sessions/completion.js'
import { fakeEnv, finishedRecord } from '../../helpers/fake-env.js'

describe("completion's values, through the port", () => {
  test('session ids newest first, described by status and a task cut at 60 characters', async () => {
    const { env, store } = fakeEnv({
      records: [
        finishedRecord('old00001', { created_at: '2026-09-01T00:00:00.000Z', prompt: 'short' }),
        finishedRecord('new00001', {
          created_at: '2026-09-02T00:00:00.000Z',
          status: 'FAILED',
          prompt: 'x'.repeat(80),
        }),
      ],
    })
    store.putCorrupt('bad00001')
    const sessions = await completionSources(env, (s) => s.prompt ?? '').sessions()
    expect(sessions).toEqual([
      { value: 'new00001', description: `FAILED ${'x'.repeat(59)}…` },
      { value: 'old00001', description: 'COMPLETED short' },
    ])
  })

  test('session names follow the ids, each saying which session it names', async () => {
    const { env } = fakeEnv({
      records: [
        finishedRecord('old00001', { created_at: '2026-09-01T00:00:00.000Z', prompt: 'a', name: 'auth' }),
        finishedRecord('new00001', { created_at: '2026-09-02T00:00:00.000Z', prompt: 'b' }),
      ],
    })
    expect(await completionSources(env, (s) => s.prompt ?? '').sessions()).toEqual([
      { value: 'new00001', description: 'COMPLETED b' },
      { value: 'old00001', description: 'COMPLETED a' },
      { value: 'auth', description: 'old00001 COMPLETED a', isName: true },
    ])
  })

  test("chain names from the port's chains, agents from its config", async () => {
    const { env } = fakeEnv({
      chains: [{ name: 'nightly', steps: [{}, {}] }],
      config: { providers: { mine: { command: 'my-agent', description: 'my own agent' } } } as never,
    })
    const sources = completionSources(env, () => '')
    expect(await sources.chains?.()).toEqual([{ value: 'nightly', description: '2 steps' }])
    expect(await sources.agents()).toContainEqual({ value: 'mine', description: 'my own agent' })
  })

  test('a store that cannot be read gives no candidates, never an error', async () => {
    const { env } = fakeEnv()
    env.store = async () => {
      throw new Error('unreadable')
    }
    expect(await completionSources(env, () => '').sessions()).toEqual([])
  })
})
