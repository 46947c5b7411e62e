import { readFileSync } from 'node:fs'
import { Readable, Writable } from 'node:stream'
import type { Command } from 'commander'
import { describe, expect, test } from 'vitest'
import { runCli } from '../../../src/app/entry.js'
import { buildProgram } from '../../../src/app/program.js'
import { CliCommand } from '../../../src/cli/command.js'
import { boolFlag, textFlag } from '../../../src/cli/options.js'
import { Output } from '../../../src/cli/output.js'

/** scripts/command-reference.mjs, which `npm run docs` runs: docs/commands.md from the program. */
interface ReferenceScript {
  PROSE_MARK: string
  commandReference(program: Command, current: string): string
}
const script = (await import(
  new URL('../../../scripts/command-reference.mjs', import.meta.url).href
)) as ReferenceScript
const COMMANDS_MD = new URL('../../../docs/commands.md', import.meta.url)

function sink(): Writable & { text: string } {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      stream.text += String(chunk)
      done()
    },
  }) as Writable & { text: string }
  stream.text = ''
  return stream
}

function program(): Command {
  const out = sink() as unknown as NodeJS.WriteStream
  const io = { cwd: '/', env: {}, stdin: Readable.from([]), stdout: out, stderr: out }
  return buildProgram(new Output({ json: false, color: false, quiet: false }, out, out, {}), [], io)
}

/** What `harness <words> --help` prints, through the entry the binary runs (stdout not a terminal: 80 columns). */
async function helpOf(words: string[]): Promise<string> {
  const stdout = sink()
  const stderr = sink()
  const io = { cwd: '/', env: {}, stdin: Readable.from([]), stdout, stderr }
  const outcome = await runCli([...words, '--help'], io as never)
  expect(outcome.code, `${words.join(' ')} --help: ${stderr.text}`).toBe(0)
  return stdout.text
}

interface Item {
  term: string
  description: string
}

/** A help text read back: its usage, description, lists (options, global options, commands) and examples. */
function parseHelp(text: string) {
  const lines = text.split('\n')
  const usage = (lines[0] ?? '').replace(/^Usage: /, '')
  const lists: Record<string, Item[]> = {}
  const description: string[] = []
  const examples: string[] = []
  let list: Item[] | undefined
  let inExamples = false
  let place: 'description' | 'lists' | 'after' = 'description'
  for (const line of lines.slice(1)) {
    const heading = /^(Arguments|Options|Global Options|Commands):$/.exec(line)
    if (line === '') {
      list = undefined
      inExamples = false
    } else if (heading?.[1]) {
      list = lists[heading[1]] = []
      place = 'lists'
    } else if (list && /^ {2}\S/.test(line)) {
      const [, term = '', rest = ''] = /^ {2}(\S(?:.*?\S)?)(?: {2,}(\S.*))?$/.exec(line) ?? []
      list.push({ term, description: rest })
    } else if (list && /^ {3,}\S/.test(line)) {
      const last = list.at(-1) as Item
      last.description = `${last.description} ${line.trim()}`.trim()
    } else if (place === 'description') {
      description.push(line)
    } else {
      place = 'after'
      if (inExamples && /^ {2}\S/.test(line)) examples.push(line.trim())
      inExamples ||= /^Examples?:$/.test(line)
    }
  }
  return { usage, description: description.join(' '), lists, examples }
}

/** The reference's sections by command path, with Markdown's escapes undone and white space made single. */
function sectionsOf(reference: string): Map<string, string> {
  const sections = new Map<string, string>()
  const parts = reference.split(/^## `(harness(?: [\w-]+)*)`$/m)
  for (let i = 1; i < parts.length; i += 2) {
    const body = (parts[i + 1] ?? '').split(script.PROSE_MARK)[0] ?? ''
    sections.set(parts[i] as string, plain(body))
  }
  return sections
}

function plain(text: string): string {
  return text.replace(/\\([\\`*_<[\]])/g, '$1').replace(/\s+/g, ' ')
}

/** What a command's help shows that its section of the reference lacks (root: the section of `harness`). */
function missingFromReference(path: string, help: string, sections: Map<string, string>): string[] {
  const section = sections.get(path)
  if (section === undefined) return [`no section "## \`${path}\`"`]
  const root = sections.get('harness') ?? ''
  const parsed = parseHelp(help)
  const missing: string[] = []
  const want = (text: string, where = section) => {
    if (!where.includes(plain(text))) missing.push(text)
  }
  want(`\`${parsed.usage}\``)
  want(parsed.description)
  for (const option of parsed.lists.Options ?? []) {
    want(`- \`${option.term}\`: ${option.description}`, option.term === '-h, --help' ? root : section)
  }
  for (const option of parsed.lists['Global Options'] ?? [])
    want(`- \`${option.term}\`: ${option.description}`, root)
  for (const command of parsed.lists.Commands ?? []) want(`[\`${command.term.split(/[ |]/)[0]}\`]`)
  for (const example of parsed.examples) want(example)
  return missing
}

/** Every command help lists, from `harness --help` down: `[words, help]`. */
async function everyHelp(): Promise<[string[], string][]> {
  const found: [string[], string][] = []
  const visit = async (words: string[]) => {
    const help = await helpOf(words)
    found.push([words, help])
    for (const command of parseHelp(help).lists.Commands ?? []) {
      await visit([...words, (command.term.split(/[ |]/)[0] as string).trim()])
    }
  }
  await visit([])
  return found
}

describe('docs/commands.md, generated from the program (npm run docs)', () => {
  test('is current: regenerated from the program and its own hand-written parts, it is unchanged', () => {
    const committed = readFileSync(COMMANDS_MD, 'utf8')
    const regenerated = script.commandReference(program(), committed)
    expect(regenerated === committed, 'docs/commands.md is not current: run "npm run docs"').toBe(true)
  })

  test('every command and subcommand that --help lists has its section, with every flag, subcommand and example', async () => {
    const sections = sectionsOf(readFileSync(COMMANDS_MD, 'utf8'))
    const helps = await everyHelp()
    expect(helps.length).toBeGreaterThan(40)
    const missing = helps.flatMap(([words, help]) =>
      missingFromReference(['harness', ...words].join(' '), help, sections).map(
        (m) => `${words.join(' ')}: ${m}`,
      ),
    )
    expect(missing).toEqual([])
    // And no section for a command that --help does not list.
    expect([...sections.keys()].sort()).toEqual(
      helps.map(([words]) => ['harness', ...words].join(' ')).sort(),
    )
  })

  test('the comparison finds a flag the reference lacks', async () => {
    const reference = readFileSync(COMMANDS_MD, 'utf8')
    const help = await helpOf(['session', 'list'])
    const withoutWatch = reference.replace(/^- `-w, --watch`.*\n/m, '')
    expect(withoutWatch).not.toBe(reference)
    expect(missingFromReference('harness session list', help, sectionsOf(withoutWatch))).toEqual([
      '- `-w, --watch`: keep the table on screen, redrawn as sessions change (Ctrl-C to quit)',
    ])
  })
})

describe('the generator', () => {
  function demo(extra = false): CliCommand {
    const root = new CliCommand('harness').description('a demo')
    const flags = {
      detach: boolFlag('-d, --detach', 'in the background'),
      ...(extra ? { name: textFlag('--name <name>', 'a <name> for it') } : {}),
    }
    root
      .command('run [prompt...]')
      .alias('chat')
      .description('start an agent')
      .flags(flags)
      .addHelpText('after', '\nA note that stays in --help.\n\nExamples:\n  harness run -d "fix lint"')
    return root
  }

  test('writes each command from its flags, keeps the hand-written parts, and a new flag changes the file', () => {
    const first = script.commandReference(demo(), '# Commands\n\nAn intro.\n')
    expect(first).toContain(
      '\n# Commands\n\nAn intro.\n\n## `harness`\n\n`harness [options] [command]`: a demo\n',
    )
    expect(first).toContain(
      '## `harness run`\n\n`harness run|chat [options] [prompt...]`: start an agent\n\n- `-d, --detach`: in the background\n',
    )
    expect(first).toContain('```sh\nharness run -d "fix lint"\n```')
    expect(first).not.toContain('A note that stays in --help')
    expect(script.commandReference(demo(), first)).toBe(first)
    // Text below the mark is the author's; a flag added to the table appears, escaped for Markdown.
    const withProse = `${first}\n${script.PROSE_MARK}\n\nWhat run does beyond its help.\n`
    const second = script.commandReference(demo(true), withProse)
    expect(second).not.toBe(withProse)
    expect(second).toContain('- `--name <name>`: a \\<name> for it\n')
    expect(second).toContain(`${script.PROSE_MARK}\n\nWhat run does beyond its help.\n`)
    expect(script.commandReference(demo(true), second)).toBe(second)
  })

  test('refuses hand-written text for a command that no longer exists', () => {
    const first = script.commandReference(demo(), '# Commands\n')
    const orphan = `${first}\n## \`harness gone\`\n\n${script.PROSE_MARK}\n\nWhat gone did.\n`
    expect(() => script.commandReference(demo(), orphan)).toThrow(
      'hand-written text for commands that no longer exist: harness gone',
    )
  })
})
