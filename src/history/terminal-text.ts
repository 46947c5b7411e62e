/**
 * The text of a terminal recording (a tmux session's log is what `pipe-pane` copied from the pane: the agent's
 * screen drawing, escapes and all), one line at a time, for `session logs` to print as text (SPEC §10; the
 * escapes stay under `--raw`). Pure.
 *
 * Not a terminal emulator: it keeps the characters the agent drew, in the order it drew them. A move to
 * another row starts a new line; a move along the row (claude 2.1 draws "Welcome\e[9Gto\e[12GClaude") is a
 * space; a carriage return keeps what was drawn after it; every other sequence (colours, modes, queries,
 * titles) is dropped.
 */

// biome-ignore-start lint/suspicious/noControlCharactersInRegex: terminal sequences are the subject here
/** OSC (titles, colour queries) and DCS/APC/PM strings, ended by BEL or ST. */
const STRINGS = /\u001b[\]P_^][^\u0007\u001b]*(\u0007|\u001b\\)?/g
/** CSI sequences: parameters, intermediates, final byte. */
const CSI = /\u001b\[([0-?]*)[ -/]*([@-~])/g
/** Two- and three-byte escapes: charset choice (ESC ( B), keypad modes, save/restore cursor (ESC 7, ESC 8). */
const SHORT = /\u001b([()*+][0-9A-Za-z]|[0-9A-Za-z=><~])/g
/** What is left of control characters once sequences are gone (tabs stay). */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g
// biome-ignore-end lint/suspicious/noControlCharactersInRegex: terminal sequences are the subject here

/** Final bytes of CSI sequences that move to another row. */
const ROW_MOVES = new Set(['A', 'B', 'E', 'F', 'H', 'f', 'd'])
/** Final bytes of CSI sequences that move along the row. */
const COLUMN_MOVES = new Set(['C', 'G', '`'])

/** One recorded line (no newline) as the lines of text it drew; a line of escapes alone draws none. */
export function terminalLines(line: string): string[] {
  const text = line
    .replace(STRINGS, '')
    .replace(CSI, (_, _params: string, final: string) =>
      ROW_MOVES.has(final) ? '\n' : COLUMN_MOVES.has(final) ? ' ' : '',
    )
    .replace(SHORT, '')
  const drawn = text.split('\n').map((row) => {
    // A carriage return goes back to the start of the row: what follows it is what stays visible.
    const segments = row.split('\r').filter((segment) => segment.trim() !== '')
    return (segments.at(-1) ?? '').replace(CONTROLS, '').trimEnd()
  })
  const hadEscapes = text !== line || line.includes('\r')
  return hadEscapes ? drawn.filter((row) => row.trim() !== '') : drawn
}
