import { Readable, Writable } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { buildProgram } from '../../../src/app/program.js'
import { lazy, type Services } from '../../../src/cli/lazy.js'
import { Output } from '../../../src/cli/output.js'
import { ExitCode, HarnessError } from '../../../src/errors.js'

// gh's `runF` seam (cli/context.ts `services`): a command's flags are parsed and checked by the real command
// tree, and its action calls stand-ins for the services it drives, which record what they were asked.

/** What a stand-in service was called with, after the context. */
type Calls = unknown[][]

/** The program with `standIns` in place of their services; `run` parses one command line with it. */
function harness(standIns: (calls: Calls) => Partial<Services>) {
  const calls: Calls = []
  let stdout = ''
  const sink = new Writable({
    write(chunk, _encoding, done) {
      stdout += String(chunk)
      done()
    },
  }) as unknown as NodeJS.WriteStream
  const io = { cwd: '/nowhere', env: {}, stdin: Readable.from([]), stdout: sink, stderr: sink }
  const out = new Output({ json: false, color: false, quiet: false }, sink, sink, {})
  const program = buildProgram(out, [], io, { ...lazy, ...standIns(calls) })
  const run = async (...words: string[]) => {
    await program.parseAsync(words, { from: 'user' })
    return stdout
  }
  return { calls, run }
}

/** What one entry of the lazy registry loads: a group of modules, each a namespace. */
type Loaded<K extends keyof Services> = Awaited<ReturnType<Services[K]>>

/**
 * An entry of the lazy registry that loads only `members` of its modules (what the command under test uses of
 * the group).
 */
function group<K extends keyof Services>(
  members: { [M in keyof Loaded<K>]?: Partial<Loaded<K>[M]> },
): Services[K] {
  return (async () => members) as unknown as Services[K]
}

async function usageError(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  )
  if (!(error instanceof HarnessError) || error.exitCode !== ExitCode.Usage)
    throw new Error(`not a usage error: ${error}`)
  return error.message
}

describe('session diff', () => {
  const diff = () =>
    harness((calls) => ({
      work: group<'work'>({
        diff: {
          diffSession: async (_ctx, id, mode) => {
            calls.push([id, mode])
            return {
              id,
              base_commit: 'b',
              source: 'worktree',
              files: [],
              worktree: null,
              branch: null,
              is_worktree: true,
            }
          },
        },
      }),
    }))

  test('--stat and --name-only choose the mode; neither is the patch', async () => {
    for (const [flags, mode] of [
      [['--stat'], 'stat'],
      [['--name-only'], 'name-only'],
      [[], 'patch'],
    ] as const) {
      const { calls, run } = diff()
      await run('session', 'diff', '3f9a', ...flags)
      expect(calls).toEqual([['3f9a', mode]])
    }
  })

  test('--stat with --name-only is a usage error, and nothing is asked of the service', async () => {
    const { calls, run } = diff()
    expect(await usageError(run('session', 'diff', '3f9a', '--stat', '--name-only'))).toBe(
      '--stat and --name-only exclude each other',
    )
    expect(calls).toEqual([])
  })
})

describe('session merge', () => {
  const merge = () =>
    harness((calls) => ({
      work: group<'work'>({
        workMerge: {
          mergeSession: async (_ctx, id, options) => {
            calls.push([id, options])
            return { outcome: 'merged' } as Awaited<ReturnType<Loaded<'work'>['workMerge']['mergeSession']>>
          },
        },
        renderMerge: { renderMerge: () => 'merged' },
      }),
    }))

  test('its flags reach the service as typed options', async () => {
    const { calls, run } = merge()
    await run('session', 'merge', '3f9a', '--squash', '-m', 'Add auth', '--dry-run')
    expect(calls).toEqual([
      ['3f9a', expect.objectContaining({ squash: true, dryRun: true, message: 'Add auth' })],
    ])
  })
})

describe('session export', () => {
  test('an unknown --format is refused before the service runs', async () => {
    const calls: Calls = []
    const { run } = harness(() => ({
      work: group<'work'>({
        workExport: {
          exportSession: async (...args) => {
            calls.push(args)
            throw new Error('never called')
          },
        },
      }),
    }))
    await expect(run('session', 'export', '3f9a', '--format', 'pdf')).rejects.toThrow(/pdf/)
    expect(calls).toEqual([])
  })
})
