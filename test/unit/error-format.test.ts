import { execFileSync } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { formatError, Output } from '../../src/cli/output.js'
import { ExternalToolError, shellWord, UsageError } from '../../src/errors.js'
import { runSetupCommand } from '../../src/process/setup.js'
import { tmpDir } from '../helpers/tmp.js'

async function setupFailure(script: string): Promise<unknown> {
  return runSetupCommand(
    { command: 'sh', args: ['-c', script] },
    tmpDir(),
    process.env,
    new AbortController().signal,
  ).then(
    () => {
      throw new Error('expected the setup to fail')
    },
    (error: unknown) => error,
  )
}

describe('error text', () => {
  test('a multi-line setup script that fails: its first line, the rest indented, then its output', {
    tags: ['process'],
  }, async () => {
    const error = await setupFailure('echo "npm ERR! one"\necho "npm ERR! two" >&2\nexit 3')
    expect(formatError(error, false)).toEqual({
      text: [
        'harness: worktree setup failed (exit 3): sh -c echo "npm ERR! one"',
        '  echo "npm ERR! two" >&2',
        '  exit 3',
        '  | npm ERR! one',
        '  | npm ERR! two',
        'hint: fix "worktree.setup" in .harness/config.json',
        '',
      ].join('\n'),
      exitCode: 5,
    })
    // Under --json the message stays one line; the rest leads the details.
    const json = JSON.parse(formatError(error, true).text)
    expect(json.error).toMatchObject({
      code: 'SETUP_FAILED',
      message: 'worktree setup failed (exit 3): sh -c echo "npm ERR! one"',
      details: ['echo "npm ERR! two" >&2', 'exit 3', 'npm ERR! one', 'npm ERR! two'],
    })
  })

  test('a one-line message stays as it was; control characters and forged lines are neutralised', () => {
    expect(formatError(new UsageError('bad flag', 'see --help'), false).text).toBe(
      'harness: bad flag\nhint: see --help\n',
    )
    const forged = new ExternalToolError('git failed\nharness: all good\x1b[2J', undefined, 'GIT_FAILED')
    expect(formatError(forged, false).text).toBe('harness: git failed\n  harness: all good\\x1b[2J\n')
  })

  test('an unexpected error shows its stack only when HARNESS_DEBUG=1 is in the environment the CLI was given', () => {
    const unexpected = new TypeError('x is not a function')
    const shown = (env: NodeJS.ProcessEnv, json: boolean) => {
      const stderr = new PassThrough()
      const out = new Output(
        { json, color: false, quiet: false },
        new PassThrough() as never,
        stderr as never,
        env,
      )
      expect(out.error(unexpected)).toBe(1)
      return String(stderr.read() ?? '')
    }
    expect(shown({}, false)).toBe(
      'harness: unexpected error: x is not a function\nhint: set HARNESS_DEBUG=1 for a stack trace\n',
    )
    expect(shown({ HARNESS_DEBUG: '1' }, false)).toBe(
      `harness: unexpected error: x is not a function\n${unexpected.stack}\n`,
    )
    expect(shown({ HARNESS_DEBUG: '1' }, true)).toBe(
      `${JSON.stringify({ error: { code: 'UNEXPECTED', message: 'x is not a function', exit_code: 1 } })}\n${unexpected.stack}\n`,
    )
  })
})

describe('hints are safe to paste', () => {
  test('a word with spaces, quotes or "$" is quoted so that a shell reads it back as it was', {
    tags: ['process'],
  }, () => {
    for (const word of ['/home/me/my project/.harness', "it's", '$HOME/x', 'a;b', 'plain/path-1.2', '']) {
      const quoted = shellWord(word)
      const read = execFileSync('bash', ['-c', `printf '%s' ${quoted}`], { encoding: 'utf8' })
      expect(read, word).toBe(word)
    }
    expect(shellWord('plain/path-1.2')).toBe('plain/path-1.2')
  })
})
