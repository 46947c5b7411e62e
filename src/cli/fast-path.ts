/**
 * The command lines answered without the bundle or without commander (docs/development/native.md,
 * "Start-up"): `harness session path <id>` in its plain form, which scripts call in loops, and the top-level
 * help. Only these exact forms are taken: any other word or flag, `session path --help` included, goes
 * through commander as usual, so parsing and usage errors stay exactly commander's.
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

/** What the small entry (cli/fast-entry.ts) may answer before the bundle is loaded. */
export type FastCall =
  /** `harness --help` or `-h`: the program's help on stdout, exit 0. */
  | { kind: 'help' }
  /** `harness` alone: the program's help on stderr, exit 2 (a missing command). */
  | { kind: 'no-command' }
  | ({ kind: 'path'; json: boolean } & PlainPathCall)

/** The command line `argv` (without node and the script) as a fast call, or null for the full CLI. */
export function fastCall(argv: readonly string[]): FastCall | null {
  if (argv.length === 0) return { kind: 'no-command' }
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) return { kind: 'help' }
  const path = plainPathCall(argv, [])
  return path && { kind: 'path', json: argv.includes('--json'), ...path }
}
