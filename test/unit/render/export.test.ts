import { expect, test } from 'vitest'
import { fenced, mdCell, renderExportMarkdown } from '../../../src/render/export.js'
import type { SessionExport } from '../../../src/sessions/work/export.js'

test('a fence is longer than any run of backticks inside it, so agent output cannot close it', () => {
  expect(fenced('plain')).toBe('```text\nplain\n```')
  expect(fenced('a ``` b\n`````` c\n')).toBe('```````text\na ``` b\n`````` c\n```````')
})

test('table cells are one line with markup escaped', () => {
  expect(mdCell('fix | the <b>auth</b>\nand `docs` *now*')).toBe(
    'fix \\| the &lt;b&gt;auth&lt;/b&gt; and \\`docs\\` \\*now\\*',
  )
  expect(mdCell('bell\u0007')).toBe('bell\\\\x07')
})

test('a session without runs, usage, checkpoints, changes or log still renders every section', () => {
  const data: SessionExport = {
    id: 'ab12cd34',
    agent: 'claude',
    model: null,
    status: 'PAUSED',
    task: 'a | b',
    branch: null,
    base_commit: null,
    created_at: '2026-01-01T00:00:00.000Z',
    completed_at: null,
    run_time_ms: null,
    runs: [],
    checkpoints: [],
    changes: null,
    cost: null,
    context_from: ['ef56'],
    log: null,
    exported_at: '2026-01-02T00:00:00.000Z',
  }
  const md = renderExportMarkdown(data)
  for (const heading of [
    '# Session ab12cd34',
    '## Runs',
    '## Tokens and cost',
    '## Checkpoints',
    '## Files changed',
    '## Log',
  ])
    expect(md).toContain(`${heading}\n`)
  expect(md).toContain('| **Task** | a \\| b |')
  expect(md).toContain('| **Context from** | `ef56` |')
})
