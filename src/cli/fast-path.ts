/**
 * The command lines answered without the bundle or without commander (docs/development/native.md, "Start-up"):
 * `harness session path <id>` and `harness session show <id>` in their plain forms, which scripts call in loops,
 * and the top-level help. Only these exact forms are taken: any other word or flag, `session path --help`
 * included, goes through commander as usual, so parsing and usage errors stay exactly commander's.
 */

/** The global flags the plain form accepts, anywhere on the line, as commander accepts them. */
const FLAGS = new Set(['--json', '-q', '--quiet', '--no-color'])

/** The commands taken in their plain form, by the words commander knows them by (`inspect` is show's alias). */
const PLAIN = { path: 'path', show: 'show', inspect: 'show' } as const

export interface PlainCall {
  command: 'path' | 'show'
  id: string
  dir?: string
}

/** `session path|show <id>` plus global flags, or null for anything else (which commander then parses). */
export function plainCall(own: readonly string[], passthrough: readonly string[]): PlainCall | null {
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
  if (words.length !== 3 || words[0] !== 'session' || !Object.hasOwn(PLAIN, words[1] as string)) return null
  const command = PLAIN[words[1] as keyof typeof PLAIN]
  return { command, id: words[2] as string, ...(dir === undefined ? {} : { dir }) }
}

/** What the small entry (cli/fast-entry.ts) may answer before the bundle is loaded. */
export type FastCall =
  /** `harness --help` or `-h`: the program's help on stdout, exit 0. */
  | { kind: 'help' }
  /** `harness` alone: the program's help on stderr, exit 2 (a missing command). */
  | { kind: 'no-command' }
  | { kind: 'path'; json: boolean; id: string; dir?: string }

/** The command line `argv` (without node and the script) as a fast call, or null for the full CLI. */
export function fastCall(argv: readonly string[]): FastCall | null {
  if (argv.length === 0) return { kind: 'no-command' }
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) return { kind: 'help' }
  const plain = plainCall(argv, [])
  if (plain?.command !== 'path') return null
  const { command: _, ...path } = plain
  return { kind: 'path', json: argv.includes('--json'), ...path }
}
