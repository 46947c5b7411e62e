import { describe, expect, test } from 'vitest'
import type { SessionRecord } from '../../../../src/sessions/record/schema.js'
import { waitForAgentStart } from '../../../../src/sessions/run/runner.js'
import { finishedRecord, runningRecord } from '../../../helpers/fake-env.js'

const plan = { id: 'start001', runN: 1 }
const SUPERVISOR: [number, string] = [4100, '900']
const starting = runningRecord(plan.id, { supervisor: SUPERVISOR })
const started = runningRecord(plan.id, { supervisor: SUPERVISOR, agent: [4101, '901'] })

/** The launcher's view of a supervisor: `events[i]` is applied once the launcher has read the record i+1 times. */
function supervisorWatch(first: SessionRecord, events: Array<{ record?: SessionRecord; gone?: boolean }>) {
  let record: SessionRecord | null | undefined = first
  let gone = false
  let reads = 0
  return {
    plan,
    supervisorGone: () => gone,
    read() {
      const seen = record
      const event = events[reads++]
      if (event?.record) record = event.record
      if (event?.gone) gone = true
      return seen
    },
  }
}

describe('the launcher waits for the detached supervisor to start the agent', () => {
  test('returns once the record names the agent', async () => {
    const watch = supervisorWatch(starting, [{ record: started }])
    await expect(waitForAgentStart(watch)).resolves.toBe(started)
  })

  test('a short agent that started, ended and was settled right after a read is not taken for a failure', async () => {
    // Under load the supervisor may run a one-line agent to its end between the launcher's read of the record
    // (still starting) and its liveness check (now dead). Only a read after the death may conclude anything.
    const ended = finishedRecord(plan.id)
    const watch = supervisorWatch(starting, [{ record: ended, gone: true }])
    await expect(waitForAgentStart(watch)).resolves.toBe(ended)
  })

  test('a supervisor that died without starting the agent is SUPERVISOR_FAILED, naming the logs', async () => {
    const watch = supervisorWatch(starting, [{ gone: true }])
    await expect(waitForAgentStart(watch)).rejects.toMatchObject({
      code: 'SUPERVISOR_FAILED',
      message: expect.stringContaining('stopped before starting the agent'),
    })
  })

  test('a live supervisor past the deadline is reported as still running, with how to stop it', async () => {
    let clock = 0
    const watch = { ...supervisorWatch(starting, []), now: () => (clock += 1_000), deadlineMs: 5_000 }
    await expect(waitForAgentStart(watch)).rejects.toMatchObject({
      code: 'SUPERVISOR_FAILED',
      message: expect.stringContaining('it is still running'),
      hint: expect.stringContaining('session kill start001'),
    })
  })
})
