import { describe, expect, it } from 'vitest'
import { hostFacts, identify } from '../../../../src/process/identity.js'
import {
  computeLiveness,
  livenessFromStates,
  processStates,
} from '../../../../src/sessions/record/liveness.js'
import type { Run, SessionRecord } from '../../../../src/sessions/record/schema.js'
import { sessionRecord } from '../../../fixtures/records.js'

// Liveness of RUNNING records (docs/development/design.md, "Liveness and reconciliation"; docs/security.md,
// "Liveness of a pid without a start time"), with the real process table: a pid above the kernel's largest
// (2^22) never holds a process, and this test's own process is a live one.
const NO_PROCESS = 2 ** 22 + 17
const here = hostFacts()
const self = identify(process.pid)
if (!self?.start_time) throw new Error('no identity for this process')

/** A RUNNING record of one run on this host (or `place`), its supervisor gone unless given. */
function running(run: Partial<Run>, place: Partial<Run> = {}): SessionRecord {
  const record = sessionRecord('live0001', { status: 'RUNNING', completed_at: null, exit_code: null })
  const first = record.runs?.[0] as Run
  record.runs = [
    {
      ...first,
      ended_at: null,
      exit_code: null,
      supervisor_pid: NO_PROCESS,
      supervisor_start_time: '1234500',
      hostname: here.hostname,
      boot_id: here.boot_id,
      pid_namespace: here.pid_namespace,
      ...place,
      ...run,
    },
  ]
  record.pid = record.runs[0]?.pid ?? null
  return record
}

describe('computeLiveness', () => {
  it('an agent pid recorded here without a start time, whose process does not exist, is dead: the session is stale', () => {
    expect(computeLiveness(running({ pid: NO_PROCESS, pid_start_time: null }))).toBe('stale')
  })

  it('an agent recorded as already exited is gone: with its supervisor gone the session is stale', () => {
    expect(computeLiveness(running({ pid: null, pid_start_time: null, agent_exited: true }))).toBe('stale')
  })

  it('a live process under a pid recorded without a start time cannot be checked: unverified, never stale', () => {
    expect(computeLiveness(running({ pid: process.pid, pid_start_time: null }))).toBe('unverified')
  })

  it('a pid recorded on another host or pid namespace is unverified, even when no such process exists here', () => {
    const elsewhere = { hostname: `${here.hostname}-elsewhere` }
    expect(computeLiveness(running({ pid: NO_PROCESS, pid_start_time: null }, elsewhere))).toBe('unverified')
    if (here.pid_namespace) {
      const container = { pid_namespace: 'pid:[1]' }
      expect(computeLiveness(running({ pid: NO_PROCESS, pid_start_time: null }, container))).toBe(
        'unverified',
      )
    }
    // Without the facts that say where it ran, a pid may belong to any machine.
    const nowhere = { hostname: null, boot_id: null, pid_namespace: null }
    const bare = running({ pid: NO_PROCESS, pid_start_time: null }, nowhere)
    bare.metadata = null
    expect(computeLiveness(bare)).toBe('unverified')
  })

  it('verified processes decide as before: a live supervisor runs, a live agent alone is orphaned', () => {
    const supervisor = { supervisor_pid: self.pid, supervisor_start_time: self.start_time }
    expect(computeLiveness(running({ pid: NO_PROCESS, pid_start_time: '1', ...supervisor }))).toBe('running')
    expect(computeLiveness(running({ pid: self.pid, pid_start_time: self.start_time }))).toBe('orphaned')
    expect(computeLiveness(running({ pid: NO_PROCESS, pid_start_time: '1' }))).toBe('stale')
  })

  it('a record of an older tool (a bare pid, no runs) with this host in its metadata is stale once the pid is gone', () => {
    const old = { ...running({}), runs: null, pid: NO_PROCESS, metadata: { ...here } }
    expect(processStates(old)).toEqual({ supervisor: 'none', agent: 'dead' })
    expect(computeLiveness(old)).toBe('stale')
    expect(computeLiveness({ ...old, metadata: null })).toBe('unverified')
    expect(computeLiveness({ ...old, pid: process.pid })).toBe('unverified')
  })

  it('is only computed for RUNNING records, and a foreign one is believed only when stale', () => {
    expect(computeLiveness({ ...running({}), status: 'PAUSED' })).toBeUndefined()
    const foreign = { ...running({ pid: self.pid, pid_start_time: self.start_time }), sealed: false }
    expect(computeLiveness(foreign)).toBe('unverified')
    const gone = { ...running({ pid: NO_PROCESS, pid_start_time: null }), sealed: false }
    expect(computeLiveness(gone)).toBe('stale')
  })
})

describe('livenessFromStates', () => {
  it('every pair of states', () => {
    const states = ['alive', 'dead', 'unverifiable', 'none'] as const
    const table = Object.fromEntries(
      states.flatMap((supervisor) =>
        states.map((agent) => [`${supervisor}/${agent}`, livenessFromStates({ supervisor, agent })]),
      ),
    )
    expect(table).toEqual({
      'alive/alive': 'running',
      'alive/dead': 'running',
      'alive/unverifiable': 'running',
      'alive/none': 'running',
      'dead/alive': 'orphaned',
      'dead/dead': 'stale',
      'dead/unverifiable': 'unverified',
      'dead/none': 'stale',
      'unverifiable/alive': 'running',
      'unverifiable/dead': 'unverified',
      'unverifiable/unverifiable': 'unverified',
      'unverifiable/none': 'unverified',
      'none/alive': 'running',
      'none/dead': 'stale',
      'none/unverifiable': 'unverified',
      'none/none': 'unverified',
    })
  })
})
