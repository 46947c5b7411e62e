// biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
const ANSI = /\u001b\[[0-9;]*m/g

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '')
}

/** Cuts `text` to `width` visible characters, marking the cut with "…". Newlines become spaces. */
export function truncate(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  if (width <= 0) return ''
  const chars = [...flat]
  if (chars.length <= width) return flat
  return `${chars.slice(0, Math.max(0, width - 1)).join('')}…`
}

const CODES = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1 } as const
export type Colour = keyof typeof CODES

export function paint(text: string, colour: Colour | undefined, enabled: boolean): string {
  if (!enabled || !colour) return text
  return `\u001b[${CODES[colour]}m${text}\u001b[0m`
}
