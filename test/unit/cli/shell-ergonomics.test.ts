import { Readable, Writable } from 'node:stream'
import type { Command } from 'commander'
import { describe, expect, test } from 'vitest'
import { buildProgram } from '../../../src/app/program.js'
import { Output } from '../../../src/cli/output.js'
import { renderSessionList, taskLabel } from '../../../src/render/session.js'
import { sessionRecord } from '../../fixtures/records.js'

describe('session list table', () => {
  test('TASK is the last column to shrink: a long branch is capped first', () => {
    const long = sessionRecord('3f9a12c8', {
      git_branch: 'feature/an-extremely-long-branch-name-that-goes-on-and-on',
      prompt: 'Implement REST endpoints for authentication and their tests',
    })
    const [header = '', row = ''] = renderSessionList([long], { width: 80 }).split('\n')
    expect(row.length).toBeLessThanOrEqual(80)
    const task = row.slice(header.indexOf('TASK'))
    expect(task.length).toBeGreaterThanOrEqual(20)
    expect(task.startsWith('Implement REST endpoints')).toBe(true)
    // Without a width nothing is cut.
    expect(renderSessionList([long])).toContain(long.git_branch as string)
  })

  test('an exec session shows its command; a session without a task shows "-"', () => {
    expect(
      taskLabel({ provider: 'exec', prompt: null, extra_args: ['npm', 'run', 'test:e2e', "it's"] }),
    ).toBe("npm run test:e2e 'it'\\''s'")
    expect(taskLabel({ provider: 'claude', prompt: '  two\n lines ' })).toBe('two lines')
    expect(taskLabel({ provider: 'claude', prompt: null })).toBe('-')
  })
})

test("every command's --help has an example", () => {
  let text = ''
  const sink = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk)
      done()
    },
  }) as unknown as NodeJS.WriteStream
  const io = { cwd: '/', env: {}, stdin: Readable.from([]), stdout: sink, stderr: sink }
  const program = buildProgram(
    new Output({ json: false, color: false, quiet: false }, sink, sink, {}),
    [],
    io,
  )
  const missing: string[] = []
  const visit = (command: Command, path: string) => {
    text = ''
    command.outputHelp()
    if (!/Examples?:\n {2}\S/.test(text)) missing.push(path)
    for (const sub of command.commands) {
      if (!(sub as Command & { _hidden?: boolean })._hidden) visit(sub, `${path} ${sub.name()}`)
    }
  }
  visit(program, 'harness')
  expect(missing).toEqual([])
})

describe('completion from the command tree', () => {
  const sources = {
    sessions: async () => [{ value: '3f9a12c8', description: 'RUNNING fix lint' }],
    agents: async () => [{ value: 'claude' }, { value: 'codex' }],
    chains: async () => [{ value: 'auth', description: '3 steps' }],
  }
  const program = () => {
    const sink = new Writable({ write: (_chunk, _encoding, done) => done() }) as unknown as NodeJS.WriteStream
    const io = { cwd: '/', env: {}, stdin: Readable.from([]), stdout: sink, stderr: sink }
    return buildProgram(new Output({ json: false, color: false, quiet: false }, sink, sink, {}), [], io)
  }
  const values = async (words: string[]) => {
    const { complete } = await import('../../../src/cli/completion.js')
    const result = await complete(program(), words, sources)
    return result.kind === 'values' ? result.candidates.map((c) => c.value) : `:${result.kind}`
  }

  test('option values, global flags at any level, ids, and nothing after --', async () => {
    expect(await values(['--json', 'session', 'kill', ''])).toEqual(['3f9a12c8'])
    expect(await values(['session', 'list', '--status', 'r'])).toEqual(['running'])
    expect(await values(['run', '--agent=co'])).toEqual(['--agent=codex'])
    expect(await values(['session', 'list', '--no-c'])).toEqual(['--no-color'])
    expect(await values(['--dir', ''])).toBe(':dirs')
    expect(await values(['run', '-a', 'exec', '--', 'np'])).toBe(':files')
    expect(await values(['session', 'show', '3f9a12c8', ''])).toEqual([])
    expect(await values(['__sup'])).toEqual([])
    expect(await values(['chain', 'k'])).toEqual(['kill'])
    expect(await values(['chain', 'status', ''])).toEqual(['auth'])
    expect(await values(['chain', 'create', ''])).toEqual([])
    expect(await values(['chain', 'add', 'auth', '--session', ''])).toEqual(['3f9a12c8'])
  })
})

describe('progress on stderr', () => {
  const stream = (tty: boolean) => {
    const s = new Writable({
      write(chunk, _encoding, done) {
        s.text += String(chunk)
        done()
      },
    }) as Writable & { text: string; isTTY?: boolean; columns?: number }
    s.text = ''
    if (tty) Object.assign(s, { isTTY: true, columns: 40 })
    return s
  }
  const drive = (tty: boolean, flags: { json?: boolean; quiet?: boolean } = {}) => {
    const err = stream(tty)
    const out = new Output(
      { json: flags.json ?? false, color: false, quiet: flags.quiet ?? false },
      stream(false) as unknown as NodeJS.WriteStream,
      err as unknown as NodeJS.WriteStream,
      {},
    )
    const progress = out.progress('cleanup')
    progress.step(0, 2, 'aaaa1111')
    progress.step(1, 2, 'bbbb2222')
    progress.end()
    return err.text
  }

  test('a terminal gets count/total and the session, redrawn in place and cleared at the end', () => {
    expect(drive(true)).toBe(
      '\r\x1b[Kharness: cleanup 1/2 aaaa1111\r\x1b[Kharness: cleanup 2/2 bbbb2222\r\x1b[K',
    )
  })

  test('nothing when piped, under --json or under -q', () => {
    expect(drive(false)).toBe('')
    expect(drive(true, { json: true })).toBe('')
    expect(drive(true, { quiet: true })).toBe('')
  })
})
