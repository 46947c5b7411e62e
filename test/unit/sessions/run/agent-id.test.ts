import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { chooseSession, parseOpencodeSessionList } from '../../../../src/sessions/run/agent-id.js'

// What opencode 1.18.33 `session list --format json` printed for a repository after one `opencode run` in its
// checkout (00:58:01) and one in a worktree of it (00:59:26): both are one opencode project (the same
// projectId); only `directory` tells them apart. The folders are renamed; the rest is as printed.
const listed = parseOpencodeSessionList(
  readFileSync(new URL('../../../fixtures/agent-state/opencode-session-list.json', import.meta.url), 'utf8'),
)
const WORKTREE = '/tmp/project/.harness/worktrees/wt1'

test("opencode's session list: the session made in this run's folder since the run began", () => {
  expect(listed.map((s) => s.id)).toEqual([
    'ses_dcbbc89abffeYAbYpMEzy0Uxis',
    'ses_dcbbdd35cfferqsgdbd58nORne',
  ])
  expect(chooseSession(listed, WORKTREE, Date.parse('2026-12-02T00:59:25Z'))).toBe(
    'ses_dcbbc89abffeYAbYpMEzy0Uxis',
  )
  expect(chooseSession(listed, `${WORKTREE}/`, Date.parse('2026-12-02T00:59:25Z'))).toBe(
    'ses_dcbbc89abffeYAbYpMEzy0Uxis',
  )
  // The checkout's session, though the latest of the project when the run began, is never this one's.
  expect(chooseSession(listed, WORKTREE, Date.parse('2026-12-02T01:00:00Z'))).toBeUndefined()
  expect(chooseSession(listed, '/tmp/project', Date.parse('2026-12-02T00:59:00Z'))).toBeUndefined()
  expect(chooseSession(listed, '/tmp/project', Date.parse('2026-12-02T00:58:00Z'))).toBe(
    'ses_dcbbdd35cfferqsgdbd58nORne',
  )
})

test('a listing that is not what opencode prints learns nothing', () => {
  for (const output of ['', 'Error: database is locked', '{}', '[{"id": 7}]', '[null]'])
    expect(parseOpencodeSessionList(output)).toEqual([])
})
