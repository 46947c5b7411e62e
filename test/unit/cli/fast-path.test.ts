import { describe, expect, test } from 'vitest'
import { fastCall, plainPathCall } from '../../../src/cli/fast-path.js'

describe('the plain `session path <id>` form taken without commander', () => {
  test.each([
    [['session', 'path', '3f9a'], { id: '3f9a' }],
    [['session', 'path', '3f9a', '--json', '-q'], { id: '3f9a' }],
    [['--no-color', 'session', '--quiet', 'path', '3f9a'], { id: '3f9a' }],
    [['--dir', '/p', 'session', 'path', '3f9a'], { id: '3f9a', dir: '/p' }],
    [['session', 'path', '3f9a', '--dir=/p'], { id: '3f9a', dir: '/p' }],
  ])('%j', (argv, expected) => {
    expect(plainPathCall(argv, [])).toEqual(expected)
  })

  // Everything else goes to commander, whose errors and help stay the only ones.
  test.each([
    [['session', 'path']],
    [['session', 'path', 'a', 'b']],
    [['session', 'path', '3f9a', '--help']],
    [['session', 'path', '-h', '3f9a']],
    [['session', 'path', '3f9a', '--bogus']],
    [['session', 'path', '-qj', '3f9a']],
    [['session', 'show', '3f9a']],
    [['path', '3f9a', 'session']],
    [['--dir', 'session', 'path', '3f9a']],
    [['--dir', '--json', 'session', 'path', '3f9a']],
    [['--dir', '/a', '--dir', '/b', 'session', 'path', '3f9a']],
    [['session', 'path', '3f9a', '--dir']],
  ])('%j is left to commander', (argv) => {
    expect(plainPathCall(argv, [])).toBeNull()
  })

  test('arguments after -- are a usage error, which commander reports', () => {
    expect(plainPathCall(['session', 'path', '3f9a'], ['x'])).toBeNull()
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
  ])('%j is left to the full CLI', (argv) => {
    expect(fastCall(argv)).toBeNull()
  })
})
