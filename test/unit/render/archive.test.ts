import { expect, test } from 'vitest'
import { renderUnarchiveReport } from '../../../src/render/archive.js'
import type { UnarchiveReport } from '../../../src/sessions/removal/unarchive.js'

const commit = 'a'.repeat(40)

test('an unarchive names each ref it left out, and why, under its session', () => {
  const report: UnarchiveReport = {
    archive: 'old.harness.tar',
    restored: [
      {
        id: 'ab12cd34',
        record: '.harness/sessions/ab12cd34.json',
        log: '.harness/logs/ab12cd34.log',
        agent_files: 0,
        refs: [
          { ref: 'refs/heads/harness/ab12cd34', commit },
          { ref: 'refs/harness/ab12cd34/checkpoints/1', commit },
        ],
        skipped_refs: ['refs/heads/feature/login', 'refs/tags/v1'],
      },
      {
        id: 'ef56ab78',
        record: '.harness/sessions/ef56ab78.json',
        log: null,
        agent_files: 2,
        refs: [],
        skipped_refs: [],
      },
    ],
  }
  expect(renderUnarchiveReport(report)).toBe(
    [
      'Restored 2 sessions from old.harness.tar:',
      '  ab12cd34  record, log, branch harness/ab12cd34, 1 checkpoint',
      "    skipped ref refs/heads/feature/login: not the session's own (only harness/ab12cd34 and its checkpoints are restored)",
      "    skipped ref refs/tags/v1: not the session's own (only harness/ab12cd34 and its checkpoints are restored)",
      '  ef56ab78  record, 2 agent files',
      '"harness session resume <id>" recreates a worktree from its branch.',
    ].join('\n'),
  )
})

test('a skipped ref stays on its one line whatever the archive holds', () => {
  const report: UnarchiveReport = {
    archive: 'x.tar',
    restored: [
      {
        id: 'ab12cd34',
        record: 'r',
        log: null,
        agent_files: 0,
        refs: [],
        skipped_refs: ['refs/heads/a\nb\u202e'],
      },
    ],
  }
  const lines = renderUnarchiveReport(report).split('\n')
  expect(lines[2]).toBe(
    "    skipped ref refs/heads/a\\nb\\u202e: not the session's own (only harness/ab12cd34 and its checkpoints are restored)",
  )
  expect(lines).toHaveLength(4)
})
