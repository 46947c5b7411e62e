import { describe, expect, test } from 'vitest'
import { fastCall, plainCall } from '../../../src/cli/fast-path.js'

describe('the plain `session path|show <id>` forms taken without commander', () => {
  test.each([
    [['session', 'path', '3f9a'], { command: 'path', id: '3f9a' }],
    [['session', 'path', '3f9a', '--json', '-q'], { command: 'path', id: '3f9a' }],
    [['--no-color', 'session', '--quiet', 'path', '3f9a'], { command: 'path', id: '3f9a' }],
    [['--dir', '/p', 'session', 'path', '3f9a'], { command: 'path', id: '3f9a', dir: '/p' }],
    [['session', 'path', '3f9a', '--dir=/p'], { command: 'path', id: '3f9a', dir: '/p' }],
    [['session', 'show', '3f9a'], { command: 'show', id: '3f9a' }],
    [['session', 'inspect', '3f9a', '--json'], { command: 'show', id: '3f9a' }],
    [['--dir=/p', 'session', 'show', 'my-name', '--no-color'], { command: 'show', id: 'my-name', dir: '/p' }],
  ])('%j', (argv, expected) => {
    expect(plainCall(argv, [])).toEqual(expected)
  })

  // Everything else goes to commander, whose errors and help stay the only ones.
  test.each([
    [['session', 'path']],
    [['session', 'path', 'a', 'b']],
    [['session', 'path', '3f9a', '--help']],
    [['session', 'path', '-h', '3f9a']],
    [['session', 'path', '3f9a', '--bogus']],
    [['session', 'path', '-qj', '3f9a']],
    [['session', 'show']],
    [['session', 'show', '3f9a', '--help']],
    [['session', 'show', '--status', 'running', '3f9a']],
    [['session', 'list', '3f9a']],
    [['session', 'constructor', '3f9a']],
    [['path', '3f9a', 'session']],
    [['--dir', 'session', 'path', '3f9a']],
    [['--dir', '--json', 'session', 'path', '3f9a']],
    [['--dir', '/a', '--dir', '/b', 'session', 'path', '3f9a']],
    [['session', 'path', '3f9a', '--dir']],
  ])('%j is left to commander', (argv) => {
    expect(plainCall(argv, [])).toBeNull()
  })

  test('arguments after -- are a usage error, which commander reports', () => {
    expect(plainCall(['session', 'path', '3f9a'], ['x'])).toBeNull()
    expect(plainCall(['session', 'show', '3f9a'], ['x'])).toBeNull()
  })
})

describe('the command lines the small entry may answer before the bundle loads', () => {
  test.each([
    [[], { kind: 'no-command' }],
    [['--help'], { kind: 'help' }],
    [['-h'], { kind: 'help' }],
    [['session', 'path', '3f9a'], { kind: 'path', id: '3f9a', json: false }],
    [
      ['--json', '--dir', '/p', 'session', 'path', '3f9a'],
      { kind: 'path', id: '3f9a', dir: '/p', json: true },
    ],
  ])('%j', (argv, expected) => {
    expect(fastCall(argv)).toEqual(expected)
  })

  // Help for a command, help with other flags, and anything after `--` are commander's.
  test.each([
    [['--help', '--json']],
    [['-q', '-h']],
    [['help']],
    [['session', '--help']],
    [['session', 'path', '3f9a', '--', 'x']],
    [['--version']],
    [['session', 'list']],
    [['session', 'show', '3f9a']],
  ])('%j is left to the full CLI', (argv) => {
    expect(fastCall(argv)).toBeNull()
  })
})
