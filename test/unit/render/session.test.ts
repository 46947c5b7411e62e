import { describe, expect, test } from 'vitest'
import { renderSessionDetail, renderSessionList } from '../../../src/render/session.js'
import { sessionRecord } from '../../fixtures/records.js'

const NOW = new Date('2026-09-24T19:00:00.000Z')

describe('session show, for people', () => {
  test('a paused session says when it was paused, and how long ago', () => {
    const paused = sessionRecord('p1', {
      status: 'PAUSED',
      stop_reason: 'interrupt',
      paused_at: '2026-09-24T18:45:00.000Z',
    })
    expect(renderSessionDetail(paused, { now: NOW })).toMatch(
      /^Paused at: +2026-09-24T18:45:00\.000Z \(15m ago\)$/m,
    )
    // Resumed since: the time it was last paused is kept in the record, not shown as if it were paused now.
    const resumed = renderSessionDetail({ ...paused, status: 'COMPLETED' }, { now: NOW })
    expect(resumed).not.toContain('Paused at')
  })

  test('files are marked + new, ~ modified, - deleted', () => {
    const session = sessionRecord('f1', {
      files_modified: ['README.md', 'gone.txt', 'src/new.ts'],
      files_added: ['src/new.ts'],
      files_deleted: ['gone.txt'],
    })
    const text = renderSessionDetail(session, { now: NOW })
    expect(text).toContain(
      'Files modified (3: 1 new, 1 modified, 1 deleted):\n  ~ README.md\n  - gone.txt\n  + src/new.ts',
    )
    // A record from before the marks were kept: its files as they were listed.
    const old = renderSessionDetail(sessionRecord('f2', { files_modified: ['a.txt'] }), { now: NOW })
    expect(old).toContain('Files modified (1):\n  a.txt')
  })

  test("harness's own fields go under one heading, never as raw lines; unknown fields under another", () => {
    const session = sessionRecord('h1', {
      project: '/home/user/project',
      seal_key: '4ad951d21ede58dc',
      rev: 4,
      schema_version: 1,
      metadata: { os: 'linux', hostname: 'vm' },
      from_a_newer_version: { x: 1 },
    })
    const text = renderSessionDetail(session, { now: NOW })
    expect(text).not.toMatch(/^(project|seal_key|rev|schema_version):/m)
    expect(text).toContain(
      [
        "Record (harness's own fields):",
        '  Project:  /home/user/project',
        '  Seal key: 4ad951d21ede58dc',
        '  Revision: 4',
        '  Schema:   1',
        '  Host:     os=linux  hostname=vm',
      ].join('\n'),
    )
    expect(text).toContain('Other fields:\n  from_a_newer_version: {"x":1}')
  })

  test('a foreign record says why it is foreign', () => {
    const text = renderSessionDetail(sessionRecord('s1', { sealed: false, seal_problem: 'other-key' }), {
      now: NOW,
    })
    expect(text).toMatch(/^Sealed: +no: foreign, .*; sealed by another key: another HOME or user\?$/m)
  })

  test('a name is shown by show and by list (a NAME column only when some session has one)', () => {
    const named = sessionRecord('n1234567', { name: 'auth' })
    expect(renderSessionDetail(named, { now: NOW })).toMatch(/^Name: +auth$/m)
    const table = renderSessionList([named, sessionRecord('a7654321')], { now: NOW })
    expect(table.split('\n')[0]).toMatch(/^ID +NAME +AGENT/)
    expect(table).toMatch(/n1234567 +auth +claude/)
    expect(table).toMatch(/a7654321 +- +claude/)
    expect(renderSessionList([sessionRecord('a7654321')], { now: NOW }).split('\n')[0]).not.toContain('NAME')
  })
})
