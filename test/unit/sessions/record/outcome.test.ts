import { describe, expect, it } from 'vitest'
import type { AgentExit } from '../../../../src/process/supervisor.js'
import {
  endedRecord,
  interruptionOf,
  type RunExit,
  runExitOf,
  startedRecord,
} from '../../../../src/sessions/record/outcome.js'
import type { SessionRecord } from '../../../../src/sessions/record/schema.js'
import { sessionRecord } from '../../../fixtures/records.js'

// The outcome of a run (docs/development/design.md, "Runs and the supervisor"), decided from the exit facts
// alone; the supervisor that gathers them runs in the e2e tests.

const NOW = new Date('2026-03-04T05:06:07.000Z')

function running(extra: Partial<SessionRecord> = {}): SessionRecord {
  const record = sessionRecord('out00001', {
    status: 'RUNNING',
    completed_at: null,
    exit_code: null,
    ...extra,
  })
  const run = record.runs?.[0]
  if (run) record.runs = [{ ...run, n: 1, ended_at: null, exit_code: null, signal: null }]
  return record
}

const end = (exit: RunExit, record = running()) => endedRecord(record, 1, exit, {}, NOW)
const kill = { action: 'kill' as const, at: '2026-03-04T05:06:00.000Z', by_pid: 42 }
const pause = { action: 'pause' as const, at: '2026-03-04T05:06:00.000Z', by_pid: 42 }

describe('endedRecord: status and fields from the exit facts', () => {
  it('exit 0 is COMPLETED; a non-zero exit or a signal harness did not send is FAILED', () => {
    expect(end({ exitCode: 0, signal: null })).toMatchObject({
      status: 'COMPLETED',
      exit_code: 0,
      stop_reason: 'exited',
      completed_at: NOW.toISOString(),
    })
    expect(end({ exitCode: 3, signal: null })).toMatchObject({
      status: 'FAILED',
      exit_code: 3,
      stop_reason: 'exit-code',
    })
    expect(end({ exitCode: null, signal: 'SIGSEGV' })).toMatchObject({
      status: 'FAILED',
      exit_code: 139,
      stop_reason: 'signal',
    })
  })

  it('a stop_request that stopped the agent decides: kill is KILLED, pause is PAUSED with no exit code', () => {
    const stopped = { exitCode: null, signal: 'SIGTERM', interruptedBy: 'SIGTERM', stopped: true }
    expect(end(stopped, running({ stop_request: kill }))).toMatchObject({
      status: 'KILLED',
      stop_reason: 'killed',
      exit_code: 143,
      stop_request: kill,
    })
    expect(end(stopped, running({ stop_request: pause }))).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'paused',
      exit_code: null,
      completed_at: null,
    })
  })

  it('an agent that exited by itself before the stop reached it keeps its own status; the request is cleared', () => {
    const ended = end(
      { exitCode: 0, signal: null, interruptedBy: 'SIGTERM', stopped: false },
      running({ stop_request: kill }),
    )
    expect(ended).toMatchObject({ status: 'COMPLETED', stop_request: null })
  })

  it('a signal the supervisor received without a request is PAUSED with its reason and 128+n, whoever died first', () => {
    const cases: [string, string, number][] = [
      ['SIGINT', 'interrupt', 130],
      ['SIGHUP', 'hangup', 129],
      ['SIGTERM', 'terminated', 143],
      ['SIGQUIT', 'interrupted', 131],
    ]
    for (const [signal, reason, code] of cases) {
      // Stopped by harness, or dead by itself first (it saw the hang-up), or even exited 0 meanwhile: PAUSED.
      for (const exit of [
        { exitCode: null, signal: 'SIGTERM', stopped: true },
        { exitCode: 129, signal: null, stopped: false },
        { exitCode: null, signal: 'SIGHUP', stopped: false },
        { exitCode: 0, signal: null, stopped: false },
      ]) {
        expect(end({ ...exit, interruptedBy: signal }), `${signal} ${JSON.stringify(exit)}`).toMatchObject({
          status: 'PAUSED',
          stop_reason: reason,
          exit_code: code,
          completed_at: null,
        })
      }
    }
  })

  it('a committed stop_request decides over a received signal (the SIGTERM of kill, of pause)', () => {
    const exit = { exitCode: null, signal: 'SIGTERM', interruptedBy: 'SIGTERM', stopped: true }
    expect(end(exit, running({ stop_request: kill }))).toMatchObject({ status: 'KILLED', exit_code: 143 })
    expect(end(exit, running({ stop_request: pause }))).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'paused',
    })
    // The agent exited by itself before the stop reached it: its own status, though harness got a signal.
    const first = { exitCode: 3, signal: null, interruptedBy: 'SIGTERM', stopped: false }
    expect(end(first, running({ stop_request: kill }))).toMatchObject({ status: 'FAILED', exit_code: 3 })
  })

  it('an agent that died of a signal under a committed request, whoever sent it, ends as the request says', () => {
    // The requester stopped it directly while the supervisor was slow, or its group was killed meanwhile: the
    // request was committed before that exit (SPEC §4), though the supervisor's own stop never reached it.
    const killedElsewhere = { exitCode: null, signal: 'SIGKILL', stopped: false }
    expect(end(killedElsewhere, running({ stop_request: kill }))).toMatchObject({
      status: 'KILLED',
      exit_code: 137,
    })
    const termed = { exitCode: null, signal: 'SIGTERM', stopped: false }
    expect(end(termed, running({ stop_request: pause }))).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'paused',
    })
    // An exit code is the agent's own ending: it keeps it.
    const own = { exitCode: 3, signal: null, stopped: false }
    expect(end(own, running({ stop_request: kill }))).toMatchObject({ status: 'FAILED', stop_request: null })
    // Without a request, a signal harness did not send is a failure.
    expect(end(killedElsewhere)).toMatchObject({ status: 'FAILED', stop_reason: 'signal' })
  })

  it('a timeout is a pause harness asked for: PAUSED "timeout" keeping 124, unless the agent exited first', () => {
    const timeout = { ...pause, reason: 'timeout' }
    const stopped = { exitCode: null, signal: 'SIGTERM', stopped: true }
    expect(end(stopped, running({ stop_request: timeout }))).toMatchObject({
      status: 'PAUSED',
      stop_reason: 'timeout',
      exit_code: 124,
      completed_at: null,
    })
    const first = { exitCode: 0, signal: null, stopped: false }
    expect(end(first, running({ stop_request: timeout }))).toMatchObject({
      status: 'COMPLETED',
      stop_request: null,
    })
  })

  it('an agent that could not start FAILED with the reason on its run', () => {
    const ended = end({ exitCode: null, signal: null, spawnError: 'command not found: nope' })
    expect(ended).toMatchObject({ status: 'FAILED', stop_reason: 'start-failed' })
    expect(ended?.runs?.[0]).toMatchObject({ error: 'command not found: nope', exit_code: null })
  })

  it('exit 0 with a failure in its output is FAILED with exit code 1; the run keeps its true 0', () => {
    const ended = end({ exitCode: 0, signal: null, reportedError: 'rate limited' })
    expect(ended).toMatchObject({ status: 'FAILED', exit_code: 1, stop_reason: 'agent-error' })
    expect(ended?.runs?.[0]).toMatchObject({
      exit_code: 0,
      error: 'rate limited',
      ended_at: NOW.toISOString(),
    })
  })

  it('exit 0 whose work could not be collected (a container run) is FAILED collect-failed, exit 1; a failing agent keeps its own', () => {
    const collected = { kind: 'failed', reason: 'the disk is full' }
    const withFault = (record: ReturnType<typeof running>) => ({
      ...record,
      container: {
        engine: 'podman',
        image: 'i',
        network: 'none',
        env: [],
        id: 'c',
        created: 't',
        name: 'n',
        collected,
      },
    })
    const ok = endedRecord(withFault(running()), 1, { exitCode: 0, signal: null }, {}, NOW)
    expect(ok).toMatchObject({ status: 'FAILED', exit_code: 1, stop_reason: 'collect-failed' })
    expect(ok?.runs?.[0]).toMatchObject({ exit_code: 0 })
    const failing = endedRecord(withFault(running()), 1, { exitCode: 3, signal: null }, {}, NOW)
    expect(failing).toMatchObject({ status: 'FAILED', exit_code: 3, stop_reason: 'exit-code' })
  })

  it('is undefined when the record is no longer this run to finish', () => {
    expect(endedRecord(running(), 2, { exitCode: 0, signal: null }, {}, NOW)).toBeUndefined()
    expect(end({ exitCode: 0, signal: null }, running({ status: 'KILLED' }))).toBeUndefined()
  })

  it("adds the run's usage and the session's cost, the captured session id, changed files and a log error", () => {
    const usage = { input_tokens: 10, output_tokens: 5, cached_tokens: null, cost_usd: 0.25 }
    const ended = endedRecord(
      running(),
      1,
      { exitCode: 0, signal: null },
      {
        usage: { logStart: 120, usage },
        agentSessionId: 'thread-1',
        files: { files: ['a.ts', 'b.ts'], added: ['b.ts'], deleted: [] },
        logError: 'the log is incomplete',
      },
      NOW,
    )
    expect(ended?.runs?.[0]).toMatchObject({ log_offset: 120, usage })
    expect(ended).toMatchObject({
      agent_session_id: 'thread-1',
      files_modified: ['a.ts', 'b.ts'],
      files_added: ['b.ts'],
      files_deleted: [],
      log_error: 'the log is incomplete',
    })
    expect(ended?.cost).toBeTruthy()
    // Nothing found: the record's own fields stay as they were.
    const plain = end({ exitCode: 0, signal: null }, running({ files_modified: ['kept'] }))
    expect(plain).toMatchObject({ files_modified: ['kept'] })
    expect(plain).not.toHaveProperty('log_error')
  })
})

describe('runExitOf and interruptionOf', () => {
  it('turns how the supervisor saw the agent end into the exit facts of the outcome', () => {
    const exit: AgentExit = { exitCode: null, signal: 'SIGTERM', stopSignal: 'SIGTERM', stopped: true }
    expect(runExitOf(exit, undefined, 'background')).toEqual({
      exitCode: null,
      signal: 'SIGTERM',
      interruptedBy: 'SIGTERM',
      stopped: true,
      spawnError: undefined,
      reportedError: undefined,
    })
    const plain: AgentExit = { exitCode: 0, signal: null, stopSignal: null, stopped: false }
    expect(runExitOf(plain, 'boom', 'headless')).toMatchObject({ interruptedBy: null, reportedError: 'boom' })
  })

  const exit = (facts: Partial<AgentExit>): AgentExit => ({
    exitCode: null,
    signal: null,
    stopSignal: null,
    stopped: false,
    ...facts,
  })
  const modes = ['interactive', 'headless', 'background'] as const
  const decided = (facts: Partial<AgentExit>) => modes.map((mode) => interruptionOf(exit(facts), mode))

  it('a stop signal harness received, or (interactive) its terminal hung up, interrupts in every mode', () => {
    expect(decided({ stopSignal: 'SIGHUP', exitCode: 0 })).toEqual(['SIGHUP', 'SIGHUP', 'SIGHUP'])
    expect(decided({ stopSignal: 'SIGTERM', signal: 'SIGTERM' })).toEqual(['SIGTERM', 'SIGTERM', 'SIGTERM'])
    expect(decided({ stopSignal: 'SIGINT', signal: 'SIGTERM' })).toEqual(['SIGINT', 'SIGINT', 'SIGINT'])
    // The agent saw the closed terminal first and exited with whatever code: still a hang-up.
    expect(decided({ hungUp: true, exitCode: 1 })).toEqual(['SIGHUP', 'SIGHUP', 'SIGHUP'])
    expect(decided({ hungUp: true, exitCode: 0 })[0]).toBe('SIGHUP')
  })

  it('in the foreground an agent dead of SIGINT is interrupted; interactive, so is one that exited 130', () => {
    expect(decided({ signal: 'SIGINT' })).toEqual(['SIGINT', 'SIGINT', null])
    expect(decided({ exitCode: 130 })).toEqual(['SIGINT', null, null])
    expect(decided({ signal: 'SIGQUIT' })).toEqual([null, null, null])
  })

  it("a Ctrl-C harness received counts unless the agent then exited 0 (it quit normally, the user's choice)", () => {
    expect(decided({ keyboardInterrupt: true, exitCode: 1 })).toEqual(['SIGINT', 'SIGINT', null])
    expect(decided({ keyboardInterrupt: true, signal: 'SIGTERM' })).toEqual(['SIGINT', 'SIGINT', null])
    expect(decided({ keyboardInterrupt: true, exitCode: 0 })).toEqual([null, null, null])
    expect(decided({ exitCode: 0 })).toEqual([null, null, null])
    expect(decided({ exitCode: 2 })).toEqual([null, null, null])
  })

  it('end to end of the rule: an interactive agent that quit with 0 is COMPLETED, one that exited 130 PAUSED', () => {
    const quit = runExitOf(exit({ exitCode: 0, keyboardInterrupt: true }), undefined, 'interactive')
    expect(end(quit)).toMatchObject({ status: 'COMPLETED', exit_code: 0 })
    const ctrlC = runExitOf(exit({ exitCode: 130 }), undefined, 'interactive')
    expect(end(ctrlC)).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupt', exit_code: 130 })
  })
})

describe('startedRecord', () => {
  it("puts the agent's pid and start time on the run and the record, and where its output starts in the log", () => {
    const started = startedRecord(running(), 1, { pid: 4242, startTime: '123456' }, 80)
    expect(started?.pid).toBe(4242)
    expect(started?.runs?.[0]).toMatchObject({ pid: 4242, pid_start_time: '123456', log_offset: 80 })
    expect(started?.runs?.[0]).not.toHaveProperty('agent_exited')
  })

  it('a run without a log (interactive) gets no offset; another run is not touched', () => {
    const agent = { pid: 4242, startTime: '1' }
    expect(startedRecord(running(), 1, agent, undefined)?.runs?.[0]).not.toHaveProperty('log_offset')
    expect(startedRecord(running(), 2, agent, 0)).toBeUndefined()
  })

  it('never writes a pid without its start time: an agent already gone is recorded as exited', () => {
    const started = startedRecord(running({ pid: null }), 1, { pid: 4242, startTime: null }, 80)
    expect(started?.pid).toBeNull()
    expect(started?.runs?.[0]).toMatchObject({
      pid: null,
      pid_start_time: null,
      agent_exited: true,
      log_offset: 80,
    })
  })
})
