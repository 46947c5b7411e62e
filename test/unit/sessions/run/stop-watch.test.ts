import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test, vi } from 'vitest'
import { applyRunExit } from '../../../../src/sessions/record/outcome.js'
import { RecordSealer } from '../../../../src/sessions/record/seal.js'
import { SessionStore } from '../../../../src/sessions/record/store.js'
import { requestFor, STOP_POLL_MS, watchStopRequest } from '../../../../src/sessions/run/stop-watch.js'
import { sessionRecord } from '../../../fixtures/records.js'
import { tmpDir } from '../../../helpers/tmp.js'

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
    // harness was told to stop (the request's SIGTERM) but the agent had exited before the stop reached it.
    expect(
      applyRunExit(running, 1, { exitCode: 0, signal: null, interruptedBy: 'SIGTERM', stopped: false }),
    ).toMatchObject({ status: 'COMPLETED', stop_reason: 'exited', stop_request: null })
    // Signalled by the stop: the request decides.
    expect(
      applyRunExit(running, 1, {
        exitCode: null,
        signal: 'SIGTERM',
        interruptedBy: 'SIGTERM',
        stopped: true,
      }),
    ).toMatchObject({
      status: 'KILLED',
      stop_reason: 'killed',
    })
  })
})

describe('the supervisor watching its record for a stop_request', () => {
  const running = (id: string) => {
    const record = sessionRecord(id, { status: 'RUNNING', completed_at: null, exit_code: null })
    const run = record.runs?.[0]
    if (run) record.runs = [{ ...run, ended_at: null, exit_code: null }]
    return record
  }
  const request = { action: 'kill' as const, at: '2026-09-24T18:30:00.000Z', by_pid: 1 }

  test('only a sealed, RUNNING record of the same run asks for a stop', () => {
    const record = { ...running('watch001'), stop_request: request, sealed: true }
    expect(requestFor(record, 1)).toEqual(request)
    expect(requestFor({ ...record, sealed: false }, 1)).toBeNull()
    expect(requestFor(record, 2)).toBeNull()
    expect(requestFor({ ...record, status: 'KILLED' }, 1)).toBeNull()
    expect(requestFor({ ...record, stop_request: null }, 1)).toBeNull()
  })

  test('a request committed through the store is seen; one in a record swapped for a foreign one is not', async () => {
    const home = tmpDir()
    const sealer = new RecordSealer(join(home, 'key'))
    const store = new SessionStore(join(home, 'sessions'), { sealer })
    await store.create(running('watch002'))
    await store.create(running('watch003'))
    const seen: string[] = []
    const watches = ['watch002', 'watch003'].map((id) =>
      watchStopRequest(store, id, 1, (r) => seen.push(`${id}:${r.action}`)),
    )
    try {
      // A file put in place by someone else: no seal, so never obeyed.
      const forged = { ...running('watch003'), stop_request: request }
      writeFileSync(store.recordPath('watch003'), JSON.stringify(forged))
      await store.update('watch002', (current) => ({ ...current, stop_request: request }))
      await vi.waitFor(() => expect(seen).toEqual(['watch002:kill']), { timeout: 60_000, interval: 20 })
      // Seen at most once, and the foreign one still not after a few polls.
      await new Promise((resolve) => setTimeout(resolve, 3 * STOP_POLL_MS))
      expect(seen).toEqual(['watch002:kill'])
    } finally {
      for (const watch of watches) watch.close()
    }
  })
})
