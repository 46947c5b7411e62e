/**
 * `harness session path <id>` without commander. Scripts call it in loops, so it skips building the command
 * tree (commander, every command's option schema) and goes straight to the same service and rendering the
 * commander action uses (docs/performance.md). Only the plain form is taken: any other word or flag, `--help`
 * included, goes through commander as usual, so parsing and usage errors stay exactly commander's.
 */

/** The global flags the plain form accepts, anywhere on the line, as commander accepts them. */
const FLAGS = new Set(['--json', '-q', '--quiet', '--no-color'])

export interface PlainPathCall {
  id: string
  dir?: string
}

/** `session path <id>` plus global flags, or null for anything else (which commander then parses). */
export function plainPathCall(own: readonly string[], passthrough: readonly string[]): PlainPathCall | null {
  if (passthrough.length > 0 || own.includes('--')) return null
  const words: string[] = []
  let dir: string | undefined
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] as string
    if (FLAGS.has(arg)) continue
    if (arg === '--dir') {
      const value = own[++i]
      if (value === undefined || value.startsWith('-') || dir !== undefined) return null
      dir = value
    } else if (arg.startsWith('--dir=')) {
      if (dir !== undefined) return null
      dir = arg.slice('--dir='.length)
    } else if (arg.startsWith('-')) return null
    else words.push(arg)
  }
  if (words.length !== 3 || words[0] !== 'session' || words[1] !== 'path') return null
  return { id: words[2] as string, ...(dir === undefined ? {} : { dir }) }
}
