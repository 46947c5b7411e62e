import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { EventReader } from '../../../src/history/events.js'
import type { RunBoundary } from '../../../src/history/log-stream.js'
import { earlierUsage, runTimeMs, sumCost } from '../../../src/history/usage.js'
import { LogRenderer } from '../../../src/render/log-stream.js'

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/agent-output/${name}`, import.meta.url))

// Each format: what `session logs` shows and the usage recorded at run end.
/** The usage a whole text reports, fed to the reader line by line as the product feeds it. */
function usageOf(text: string) {
  const reader = new EventReader()
  for (const line of text.split('\n')) reader.push(line)
  reader.end()
  return reader.usage
}

/** A whole log rendered at once through the renderer the product uses. */
function renderLogText(bytes: Buffer, runs: readonly RunBoundary[] = []): string {
  let text = ''
  const renderer = new LogRenderer((chunk) => {
    text += chunk
  }, false)
  renderer.setRuns(runs)
  renderer.feed(bytes, 0)
  renderer.finish(bytes.length)
  return text
}

const CASES: [string, string, ReturnType<typeof usageOf>][] = [
  [
    'claude.jsonl',
    `· session 5f1c2a9e-0d7b-4c1e-9a8f-2b3c4d5e6f70 (claude-sonnet-4-5)
I'll look at the tests first.
→ Bash(npm test -- --run)
  ✗ FAIL src/auth.test.ts
    ✗ rejects an expired token
    Tests: 1 failed, 11 passed
    … 1 more line
→ Edit(src/auth.ts)
  ← The file src/auth.ts has been updated.
Fixed the expiry check in \`src/auth.ts\`.
All tests pass now.
· usage: 6,126 in (4,100 cached), 125 out, $0.0213
`,
    { input_tokens: 6126, output_tokens: 125, cached_tokens: 4100, cost_usd: 0.0213 },
  ],
  [
    'claude-offline.jsonl',
    `· session b356d114-7ff2-4fda-99c3-320643a54f9f (claude-opus-4-8[1m])
Not logged in · Please run /login
error: Not logged in · Please run /login
· usage: 0 in, 0 out, $0.0000
`,
    { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 },
  ],
  [
    'codex.jsonl',
    `· thread 0199a213-81c0-7800-8aa1-bbab2a035a53
(thinking) **Looking at the failing test**
→ shell(bash -lc 'npm test')
  ✗ FAIL src/auth.test.ts
    Tests: 1 failed
→ edit(update src/auth.ts)
→ docs.search(jwt expiry)
  ← exp is seconds since the epoch
Fixed the expiry check in src/auth.ts.
· usage: 24,763 in (24,448 cached), 122 out
`,
    { input_tokens: 24763, output_tokens: 122, cached_tokens: 24448, cost_usd: null },
  ],
  [
    'codex-offline.jsonl',
    `WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/home/user/.codex"))
Reading additional input from stdin...
· thread 01a22ee9-a1cf-7ba3-b80f-1e55ab7fa472
2026-12-01T00:03:13.561061Z ERROR codex_api::endpoint::responses_websocket: failed to connect to Responses WebSocket stage=Unknown
· Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information: Name does not resolve)
· Falling back from WebSockets to HTTPS transport. stream disconnected before completion: failed to lookup address information: Name does not resolve
· Reconnecting... waiting for network (Connection failed: error sending request)
`,
    null,
  ],
  [
    'gemini.json',
    `· session c0ffee00-1234-4abc-8def-0123456789ab
Fixed the expiry check in src/auth.ts.
· usage: 5,000 in (4,000 cached), 220 out
`,
    { input_tokens: 5000, output_tokens: 220, cached_tokens: 4000, cost_usd: null },
  ],
  [
    'gemini-offline.json',
    `· session eb8f6110-b633-4fb5-a38d-69f7b5291fae
error: Please set an Auth method in your /home/user/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA
`,
    null,
  ],
  [
    'gemini-stream.jsonl',
    `· session c0ffee00-1234-4abc-8def-0123456789ab (gemini-2.5-pro)
→ read_file(src/auth.ts)
  ← export function valid(exp) {}
Fixed the expiry check.
· warning: Loop detected, stopping
· usage: 1,200 in (1,000 cached), 130 out
`,
    { input_tokens: 1200, output_tokens: 130, cached_tokens: 1000, cost_usd: null },
  ],
  [
    'opencode.jsonl',
    `→ bash(npm test)
  ← Tests: 12 passed
→ read(src/missing.ts)
  ✗ File not found: src/missing.ts
All 12 tests pass.
error: Invalid API key
· usage: 8,700 in (6,500 cached), 130 out, $0.0043
`,
    { input_tokens: 8700, output_tokens: 130, cached_tokens: 6500, cost_usd: 0.0043 },
  ],
  [
    'pi.jsonl',
    `· session 01a22eec-5793-7614-82af-55366400c010
Let me read the file.
→ read(src/auth.ts)
  ← export function valid(exp) {
    return exp > now()
    }
The check is fixed.
· usage: 2,750 in (2,200 cached), 50 out, $0.0032
`,
    { input_tokens: 2750, output_tokens: 50, cached_tokens: 2200, cost_usd: 0.00321 },
  ],
  [
    'pi-offline.jsonl',
    `· session 01a22eec-5793-7614-82af-55366400c010
No API key found for the selected model.

Use /login to log into a provider via OAuth or API key. See:
  /usr/lib/node_modules/@mariozechner/pi-coding-agent/docs/providers.md
  /usr/lib/node_modules/@mariozechner/pi-coding-agent/docs/models.md
`,
    null,
  ],
]

describe.each(CASES)('%s', (name, rendered, usage) => {
  test('renders as text and reports its usage', () => {
    expect(renderLogText(fixture(name))).toBe(rendered)
    expect(usageOf(fixture(name).toString('utf8'))).toEqual(usage)
  })

  test('renders the same when fed in 7-byte pieces (as -f reads a growing log)', () => {
    const bytes = fixture(name)
    let text = ''
    const renderer = new LogRenderer((chunk) => {
      text += chunk
    })
    for (let i = 0; i < bytes.length; i += 7) renderer.feed(bytes.subarray(i, i + 7), i)
    renderer.finish(bytes.length)
    expect(text).toBe(rendered)
  })
})

test('unknown, malformed and non-JSON lines are printed as they are', () => {
  const lines = [
    'plain text',
    '{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}],"role":"assistant"}}',
    '{"type":"something.new","x":1}',
    '{not json}',
    '{"type":"result","usage":"not an object"',
    '[1,2,3]',
    '{',
    '  "half": "a document that never closes"',
  ]
  expect(renderLogText(Buffer.from(lines.join('\n')))).toBe(
    ['plain text', 'hi', ...lines.slice(2)].map((l) => `${l}\n`).join(''),
  )
  expect(usageOf(lines.join('\n'))).toBeNull()
})

test('an event whose fields have unexpected types never throws', () => {
  const reader = new EventReader()
  const odd = [
    { type: 'assistant', message: { content: 'text', role: 'assistant' } },
    { type: 'turn.completed', usage: { input_tokens: 'many' } },
    { type: 'item.completed', item: { type: 'command_execution' } },
    { type: 'step_finish', part: { tokens: { cache: null } } },
    { type: 'message_end', message: { role: 'assistant', content: null, usage: { cost: 3 } } },
    { type: 'tool_use', part: { state: null } },
  ]
  for (const event of odd) expect(() => reader.push(JSON.stringify(event))).not.toThrow()
  expect(() => reader.end()).not.toThrow()
})

test('a header line marks where each run begins; a run that printed nothing still shows', () => {
  const log = Buffer.from('{"type":"thread.started","thread_id":"t1"}\nfirst\nsecond run\n')
  const runs = [
    { n: 1, kind: 'start', started_at: '2026-11-30T10:00:00.000Z', log_offset: 0 },
    { n: 2, kind: 'resume', started_at: '2026-11-30T11:00:00.000Z', log_offset: log.indexOf('second') },
    { n: 3, kind: 'resume', started_at: '2026-11-30T12:00:00.000Z', log_offset: log.length },
  ]
  expect(renderLogText(log, runs)).toBe(
    [
      '── run 1 · start · 2026-11-30T10:00:00.000Z ──',
      '· thread t1',
      'first',
      '',
      '── run 2 · resume · 2026-11-30T11:00:00.000Z ──',
      'second run',
      '',
      '── run 3 · resume · 2026-11-30T12:00:00.000Z ──',
      '',
    ].join('\n'),
  )
})

test('a run that began in the middle of a line (the last run ended without a newline) starts a line', () => {
  const log = Buffer.from('no newline at endnext run\n')
  const runs = [
    { n: 1, kind: 'start', started_at: '2026-11-30T10:00:00.000Z', log_offset: 0 },
    { n: 2, kind: 'resume', started_at: '2026-11-30T11:00:00.000Z', log_offset: 17 },
  ]
  expect(renderLogText(log, runs).split('\n')).toEqual([
    '── run 1 · start · 2026-11-30T10:00:00.000Z ──',
    'no newline at end',
    '',
    '── run 2 · resume · 2026-11-30T11:00:00.000Z ──',
    'next run',
    '',
  ])
})

test('usage of several runs sums into the record cost; a run without usage adds nothing', () => {
  const runs = [
    {
      started_at: '2026-11-30T10:00:00.000Z',
      ended_at: '2026-11-30T10:01:00.000Z',
      usage: usageOf(fixture('claude.jsonl').toString()),
    },
    { started_at: '2026-11-30T12:00:00.000Z', ended_at: '2026-11-30T12:00:30.000Z', usage: null },
    {
      started_at: '2026-11-30T13:00:00.000Z',
      ended_at: '2026-11-30T13:00:10.500Z',
      usage: usageOf(fixture('codex.jsonl').toString()),
    },
  ]
  expect(sumCost(runs)).toEqual({ total_tokens: 6126 + 125 + 24763 + 122, estimated_cost_usd: 0.0213 })
  expect(sumCost([{ started_at: '2026-11-30T10:00:00.000Z', usage: null }])).toBeNull()
  // The idle hours between runs do not count.
  expect(runTimeMs(runs)).toBe(60_000 + 30_000 + 10_500)
  const running = [{ started_at: '2026-11-30T10:00:00.000Z', ended_at: null }]
  expect(runTimeMs(running)).toBeNull()
  expect(runTimeMs(running, new Date('2026-11-30T10:00:05.000Z'))).toBe(5000)
})

test("claude's api_retry events (claude-code 2.1.332 against a server answering 529) are shown, not dropped", () => {
  const text = renderLogText(fixture('claude-retry.jsonl'))
  expect(text).toContain('· API request failed, retrying (attempt 1/10 in 0.6 s): 529 overloaded\n')
  expect(text).toContain('· API request failed, retrying (attempt 2/10 in 1 s): 529 overloaded\n')
})

test('a codex error that is not a retry is still an error', () => {
  const text = renderLogText(
    Buffer.from(
      `${JSON.stringify({ type: 'error', message: 'unexpected status 401 Unauthorized' })}\n${JSON.stringify({ type: 'error', message: 'Reconnecting... 1/5 (timeout)' })}\n`,
    ),
  )
  expect(text).toBe('error: unexpected status 401 Unauthorized\n· Reconnecting... 1/5 (timeout)\n')
})

// codex 0.171 `exec --json` against a scripted Responses server (120 in, 30 out per request; two requests per
// run): the first run, then `exec resume <thread_id>` of the same thread. The resumed run's `turn.completed`
// reports the thread's total (480 in, 120 out), the first run's tokens included.
test("a resumed codex thread's usage is the run's own: the earlier runs' tokens are subtracted", () => {
  const first = fixture('codex-thread-first.jsonl').toString()
  const resumed = fixture('codex-thread-resumed.jsonl').toString()
  const firstUsage = usageOf(first)
  expect(firstUsage).toEqual({ input_tokens: 240, output_tokens: 60, cached_tokens: 0, cost_usd: null })
  const runs = [
    { n: 1, started_at: '2026-12-02T01:00:00.000Z', usage: firstUsage },
    { n: 2, started_at: '2026-12-02T01:10:00.000Z', usage: null },
  ]
  const reader = new EventReader({ earlier: earlierUsage(runs, 2) })
  for (const line of resumed.split('\n')) reader.push(line)
  reader.end()
  const own = { input_tokens: 240, output_tokens: 60, cached_tokens: 0, cost_usd: null }
  expect(reader.usage).toEqual(own)
  expect(sumCost([runs[0] as (typeof runs)[0], { ...(runs[1] as (typeof runs)[1]), usage: own }])).toEqual({
    total_tokens: 600,
    estimated_cost_usd: null,
  })
  // `logs` shows each run's own usage too: the reader of the next run starts from the thread's totals so far.
  const log = Buffer.from(`${first}${resumed}`)
  const text = renderLogText(log, [
    { n: 1, kind: 'start', log_offset: 0, started_at: '2026-12-02T01:00:00.000Z' },
    { n: 2, kind: 'resume', log_offset: Buffer.byteLength(first), started_at: '2026-12-02T01:10:00.000Z' },
  ])
  expect(text.match(/usage: .*/g)).toEqual(['usage: 240 in, 60 out', 'usage: 240 in, 60 out'])
  // A resume that began a new thread (its totals below what the session had) counts as its own.
  const fresh = new EventReader({
    earlier: { input_tokens: 9000, output_tokens: 900, cached_tokens: 0, cost_usd: null },
  })
  for (const line of first.split('\n')) fresh.push(line)
  expect(fresh.usage).toEqual(firstUsage)
})
