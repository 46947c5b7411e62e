import { Readable, Writable } from 'node:stream'
import type { Command } from 'commander'
import { describe, expect, test } from 'vitest'
import * as z from 'zod/mini'
import { buildProgram } from '../../../src/app/program.js'
import { action } from '../../../src/cli/action.js'
import { CliCommand } from '../../../src/cli/command.js'
import { complete } from '../../../src/cli/completion.js'
import {
  boolFlag,
  choiceFlag,
  type Flags,
  listFlag,
  negatedFlag,
  type OfferedValues,
  parsedFlag,
  textFlag,
} from '../../../src/cli/options.js'
import { Output } from '../../../src/cli/output.js'
import { HarnessError } from '../../../src/errors.js'

const FLAGS = {
  mode: choiceFlag('-M, --mode <mode>', 'fast | slow', ['fast', 'slow'], { default: 'fast' }),
  tag: listFlag('--tag <tag>', 'repeatable'),
  count: parsedFlag('--count <n>', 'a whole number', () =>
    z.pipe(z.string().check(z.regex(/^\d+$/)), z.transform(Number)),
  ),
  label: textFlag('--label <text>', 'any text', { values: 'sessions' }),
  dryRun: boolFlag('--dry-run', 'change nothing'),
  worktree: negatedFlag('--no-worktree', 'stay here'),
} satisfies Flags

/** A command declared from FLAGS whose action hands back what it received, or the error it threw. */
async function parse(argv: string[]): Promise<{ options?: unknown; error?: unknown }> {
  const seen: { options?: unknown; error?: unknown } = {}
  const command = new CliCommand('demo')
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} })
    .flags(FLAGS)
    .action(
      action(FLAGS, (options) => {
        seen.options = options
      }),
    )
  try {
    await command.parseAsync(argv, { from: 'user' })
  } catch (error) {
    seen.error = error
  }
  return seen
}

describe('a flag declared once', () => {
  test('commander parses it: defaults, repetition, negation, values the schema turns into numbers', async () => {
    expect((await parse([])).options).toEqual({ mode: 'fast', worktree: true })
    const { options } = await parse([
      '-M',
      'slow',
      '--tag',
      'a,b',
      '--tag',
      'c',
      '--count',
      '12',
      '--dry-run',
      '--no-worktree',
    ])
    expect(options).toEqual({ mode: 'slow', tag: ['a', 'b', 'c'], count: 12, dryRun: true, worktree: false })
  })

  test('the schema refuses a bad value: a usage error (exit 2) naming the flag and what it takes', async () => {
    const { error, options } = await parse(['--mode', 'warp'])
    expect(options).toBeUndefined()
    expect(error).toBeInstanceOf(HarnessError)
    expect((error as HarnessError).exitCode).toBe(2)
    expect((error as HarnessError).message).toBe(
      'invalid value "warp" for --mode: expected one of fast, slow',
    )
    expect((error as HarnessError).hint).toBe('see "demo --help"')
    const count = await parse(['--count', 'many'])
    expect((count.error as HarnessError).exitCode).toBe(2)
    expect((count.error as HarnessError).message).toMatch(/^invalid value "many" for --count: /)
  })

  test('help shows each flag as declared, with its default', () => {
    const help = new CliCommand('demo').flags(FLAGS).helpInformation()
    expect(help).toContain('-M, --mode <mode>')
    expect(help).toContain('fast | slow (default: "fast")')
    expect(help).toContain('--no-worktree')
    expect(help).not.toContain('choices')
  })

  test('a key that is not the name commander gives the value is refused when the command is completed', () => {
    const demo = new CliCommand('demo').flags({ dry: boolFlag('--dry-run', 'x') })
    expect(() => demo.complete()).toThrow(/commander names it "dryRun"/)
  })

  test('completion offers the declared choices and looks up the declared values', async () => {
    const program = new CliCommand('demo').flags(FLAGS)
    const sources = { sessions: async () => [{ value: '3f9a12c8' }], agents: async () => [] }
    expect(await complete(program, ['--mode', ''], sources)).toEqual({
      kind: 'values',
      candidates: [{ value: 'fast' }, { value: 'slow' }],
    })
    expect(await complete(program, ['--label', ''], sources)).toEqual({
      kind: 'values',
      candidates: [{ value: '3f9a12c8' }],
    })
  })
})

test('every option of every command in the program is a declared one', () => {
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() }) as unknown as NodeJS.WriteStream
  const io = { cwd: '/', env: {}, stdin: Readable.from([]), stdout: sink, stderr: sink }
  const program = buildProgram(
    new Output({ json: false, color: false, quiet: false }, sink, sink, {}),
    [],
    io,
  )
  // Every command's flags made at once: a key commander would name otherwise throws here.
  program.completeTree()
  const undeclared: string[] = []
  let count = 0
  const visit = (command: Command, path: string) => {
    for (const option of command.options) {
      count++
      if (!('offeredChoices' in (option as typeof option & OfferedValues)))
        undeclared.push(`${path} ${option.flags}`)
    }
    for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`)
  }
  visit(program, 'harness')
  expect(count).toBeGreaterThan(50)
  expect(undeclared).toEqual([])
})
