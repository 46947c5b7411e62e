import stringWidth from 'string-width'

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
const ANSI = /\u001b\[[0-9;]*m/g

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '')
}

/** Terminal columns `text` takes: colour codes none, wide characters (CJK, most emoji) two. */
export function displayWidth(text: string): number {
  return stringWidth(text)
}

/** Cuts `text` to `width` terminal columns, marking the cut with "…". Newlines become spaces. */
export function truncate(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (width <= 0) return ''
  if (stringWidth(flat) <= width) return flat
  // Whole characters (code points) while they fit beside the marker; a wide one that would not fit is left out.
  let out = ''
  let used = 0
  for (const char of flat) {
    const w = stringWidth(char)
    if (used + w > width - 1) break
    out += char
    used += w
  }
  return `${out}…`
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1 } as const
export type Colour = keyof typeof CODES

/** A status's colour, in a listing and in the dashboard. */
export const STATUS_COLOURS: Record<string, Colour & ('cyan' | 'yellow' | 'green' | 'red' | 'magenta')> = {
  RUNNING: 'cyan',
  PAUSED: 'yellow',
  COMPLETED: 'green',
  FAILED: 'red',
  KILLED: 'magenta',
}

export function paint(text: string, colour: Colour | undefined, enabled: boolean): string {
  if (!enabled || !colour) return text
  return `\u001b[${CODES[colour]}m${text}\u001b[0m`
}

/** `1 file`, `2 files`. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`
}

/**
 * `text` in lines of at most `width` terminal columns, broken at spaces; a word longer than a line (a path) keeps
 * a line of its own, whole, so that it can still be copied.
 */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && stringWidth(line) + 1 + stringWidth(word) > width) {
      lines.push(line)
      line = word
    } else line = line ? `${line} ${word}` : word
  }
  if (line || lines.length === 0) lines.push(line)
  return lines
}
