import { describe, expect, test } from 'vitest'
import { applyRunExit } from '../../src/sessions/outcome.js'
import { sessionRecord } from '../fixtures/records.js'

describe("stop requests and the agent's own exit", () => {
  test('an agent that exits by itself before any signal keeps its own status; the request is cleared', () => {
    const running = sessionRecord('self0001', {
      status: 'RUNNING',
      completed_at: null,
      stop_request: { action: 'kill', at: '2026-09-24T18:30:00.000Z', by_pid: 1 },
    })
    const run = running.runs?.[0]
    if (run) running.runs = [{ ...run, ended_at: null }]
    expect(applyRunExit(running, 1, { exitCode: 0, signal: null })).toMatchObject({
      status: 'COMPLETED',
      exit_code: 0,
      stop_request: null,
    })
    expect(applyRunExit(running, 1, { exitCode: 3, signal: null })).toMatchObject({
      status: 'FAILED',
      stop_request: null,
    })
    // Signalled by the stop: the request decides.
    expect(applyRunExit(running, 1, { exitCode: null, signal: 'SIGTERM', interrupted: true })).toMatchObject({
      status: 'KILLED',
      stop_reason: 'killed',
    })
  })
})
