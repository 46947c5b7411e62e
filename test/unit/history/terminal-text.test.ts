import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { terminalLines } from '../../../src/history/terminal-text.js'
import { LogRenderer } from '../../../src/render/log-stream.js'

/** A log rendered at once, as `session logs` renders a tmux session's log. */
function render(bytes: Buffer, terminal: boolean): string {
  let text = ''
  const renderer = new LogRenderer(
    (chunk) => {
      text += chunk
    },
    false,
    undefined,
    terminal,
  )
  renderer.feed(bytes, 0)
  renderer.finish(bytes.length)
  return text
}

// What tmux's pipe-pane copied from a pane running claude-code 2.1.332 (fake key, scripted loopback server):
// its start, "make the change" typed, the Write's permission prompt (the file was there) answered, the turn's end.
const pane = readFileSync(new URL('../../fixtures/agent-output/claude-tmux-pane.txt', import.meta.url))

test("a tmux session's log prints as text: no escapes, the words the agent drew, in order", () => {
  const text = render(pane, true)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
  const lines = text.split('\n')
  const at = (needle: string) => lines.findIndex((line) => line.includes(needle))
  expect(at('Claude Code v2.1.332')).toBeGreaterThanOrEqual(0)
  expect(at('Do you want to overwrite made-by-agent.txt?')).toBeGreaterThan(at('Claude Code v2.1.332'))
  expect(at('All done.')).toBeGreaterThan(at('Do you want to overwrite made-by-agent.txt?'))
  // The same log read as a plain one keeps its escapes (what --raw prints, byte for byte, is not rendered).
  expect(render(pane, false)).toContain('\u001b[')
})

test('moves along a row are spaces, moves to another row are new lines, a carriage return overwrites', () => {
  expect(terminalLines('\u001b[31mWelcome\u001b[9Gto\u001b[12GClaude\u001b[39m')).toEqual([
    'Welcome to Claude',
  ])
  expect(terminalLines('\u001b[2J\u001b[Hfirst\u001b[2;1Hsecond')).toEqual(['first', 'second'])
  expect(terminalLines('⠋ working\r⠙ working\r✓ done')).toEqual(['✓ done'])
  expect(terminalLines('\u001b]0;title\u0007\u001b[?25l\u001b(B')).toEqual([])
  // A line without escapes is kept as it is, blank or not (JSON events of a later headless run).
  expect(terminalLines('{"type":"result"}')).toEqual(['{"type":"result"}'])
  expect(terminalLines('')).toEqual([''])
})
