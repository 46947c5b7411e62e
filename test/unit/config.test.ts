import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  cleanupOlderThanMs,
  type HarnessConfig,
  loadConfig,
  mergeConfigs,
  userConfigFile,
  worktreeRoot,
  worktreeSetupCommand,
} from '../../src/config.js'
import { JsonTextError } from '../../src/disk/door.js'
import { ConfigError } from '../../src/errors.js'
import { buildAgentInvocation, resolveProvider } from '../../src/providers/args.js'
import { trustProject } from '../../src/trust.js'
import { usageThrow } from '../helpers/errors.js'
import { tmpDir } from '../helpers/tmp.js'

interface Setup {
  env: NodeJS.ProcessEnv
  userFile: string
  projectFile: string
  load: () => HarnessConfig
}

/** A HOME with an XDG config dir and a project, neither file written yet. */
function setup(): Setup {
  const home = tmpDir()
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'xdg') }
  const userFile = join(home, 'xdg', 'harness', 'config.json')
  const projectFile = join(home, 'project', '.harness', 'config.json')
  mkdirSync(join(home, 'xdg', 'harness'), { recursive: true })
  mkdirSync(join(home, 'project', '.harness'), { recursive: true })
  // The project file is trusted as it is when loaded (trust itself is tested in trust.test.ts).
  const load = () => {
    if (existsSync(projectFile) && statSync(projectFile).isFile())
      trustProject(join(home, 'project'), projectFile, env)
    return loadConfig({ projectConfigFile: projectFile, env })
  }
  return { env, userFile, projectFile, load }
}

function write(file: string, value: unknown): void {
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value))
}

const configError = (fn: () => unknown): ConfigError => usageThrow(ConfigError, fn)

describe('userConfigFile', () => {
  test('XDG_CONFIG_HOME when set and absolute', () => {
    expect(userConfigFile({ XDG_CONFIG_HOME: '/cfg', HOME: '/home/u' })).toBe('/cfg/harness/config.json')
  })

  test('~/.config without XDG_CONFIG_HOME, or with a relative one', () => {
    expect(userConfigFile({ HOME: '/home/u' })).toBe('/home/u/.config/harness/config.json')
    expect(userConfigFile({ HOME: '/home/u', XDG_CONFIG_HOME: '' })).toBe(
      '/home/u/.config/harness/config.json',
    )
    expect(userConfigFile({ HOME: '/home/u', XDG_CONFIG_HOME: 'rel/cfg' })).toBe(
      '/home/u/.config/harness/config.json',
    )
  })
})

describe('loadConfig: reading and merging', () => {
  test('no files: an empty configuration', () => {
    expect(setup().load()).toEqual({})
  })

  test('the user file is read from XDG_CONFIG_HOME', () => {
    const s = setup()
    write(s.userFile, { defaults: { agent: 'codex' } })
    expect(s.load()).toEqual({ defaults: { agent: 'codex' } })
  })

  test('the user file falls back to ~/.config without XDG_CONFIG_HOME', () => {
    const s = setup()
    const home = s.env.HOME as string
    mkdirSync(join(home, '.config', 'harness'), { recursive: true })
    write(join(home, '.config', 'harness', 'config.json'), { defaults: { model: 'opus' } })
    expect(loadConfig({ projectConfigFile: s.projectFile, env: { HOME: home } })).toEqual({
      defaults: { model: 'opus' },
    })
  })

  test('the project file wins key by key; provider entries merge field by field', () => {
    const s = setup()
    write(s.userFile, {
      providers: {
        claude: { command: '/opt/claude', model_args: ['--model', '{model}'] },
        codex: { prompt: { interactive: ['--ask', '{prompt}'] } },
        mine: { command: 'mine' },
      },
      defaults: { agent: 'claude', permission: 'readonly' },
      worktree: { root: '../wt', include: ['.env'] },
      cleanup: { older_than: '30' },
    })
    write(s.projectFile, {
      providers: { claude: { model_args: ['-m', '{model}'] }, codex: { prompt: { headless: ['{prompt}'] } } },
      defaults: { permission: 'autonomous' },
      worktree: { setup: ['npm', 'ci'] },
    })
    const config = s.load()
    expect(config).toEqual({
      providers: {
        claude: { command: '/opt/claude', model_args: ['-m', '{model}'] },
        codex: { prompt: { headless: ['{prompt}'], interactive: ['--ask', '{prompt}'] } },
        mine: { command: 'mine' },
      },
      defaults: { agent: 'claude', permission: 'autonomous' },
      worktree: { root: '../wt', include: ['.env'], setup: ['npm', 'ci'] },
      cleanup: { older_than: '30' },
    })
    const claude = buildAgentInvocation({
      provider: resolveProvider('claude', config),
      mode: 'headless',
      kind: 'start',
      prompt: 'x',
      model: 'opus',
    })
    expect([claude.command, ...claude.args]).toEqual([
      '/opt/claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '-m',
      'opus',
      'x',
    ])
  })

  test('a new provider defined across both files only needs a command once', () => {
    const s = setup()
    write(s.userFile, { providers: { mine: { command: 'mine' } } })
    write(s.projectFile, { providers: { mine: { resume: ['--again'] } } })
    expect(s.load().providers?.mine).toEqual({ command: 'mine', resume: ['--again'] })
  })

  test('a new provider without a command names the file that defines it', () => {
    const s = setup()
    write(s.projectFile, { providers: { mine: { prompt: ['{prompt}'] } } })
    expect(configError(() => s.load()).message).toBe(
      `invalid config ${s.projectFile}: providers.mine.command: required for a provider that is not built in`,
    )
  })

  test('mergeConfigs leaves absent sections absent', () => {
    expect(mergeConfigs({}, {})).toEqual({})
    expect(mergeConfigs({ cleanup: { older_than: '1d' } }, {})).toEqual({ cleanup: { older_than: '1d' } })
  })
})

describe('loadConfig: invalid files', () => {
  const cases: [string, unknown, string][] = [
    // Where, never what: the message quotes no byte of the file (docs/development/security.md, "By
    // construction").
    ['not JSON', '{ "providers": ', 'not valid JSON'],
    ['not an object', '[]', '(top level): expected object, received array'],
    [
      'a wrong type at a nested key',
      { providers: { claude: { command: 3 } } },
      'providers.claude.command: expected string, received number',
    ],
    [
      'an unknown permission',
      { defaults: { permission: 'yolo' } },
      'defaults.permission: expected one of "readonly"|"supervised"|"autonomous"',
    ],
    [
      'a bad older_than',
      { cleanup: { older_than: 'soon' } },
      'cleanup.older_than: invalid duration "soon" (use a number of days, or 90m, 12h, 7d, 2w)',
    ],
    ['an unknown top-level key', { provider: {} }, 'provider: unknown key'],
    ['a misspelt nested key', { worktree: { rooot: 'x' } }, 'worktree.rooot: unknown key'],
    [
      'a misspelt provider field',
      { providers: { codex: { comand: 'x' } } },
      'providers.codex.comand: unknown key',
    ],
    [
      'a wrong type inside a per-mode list',
      { providers: { codex: { prompt: { headless: ['-p', 1] } } } },
      'providers.codex.prompt.headless[1]: expected string, received number',
    ],
    [
      'a per-mode field of the wrong type',
      { providers: { codex: { resume: 'resume' } } },
      'providers.codex.resume: expected a list of strings, or an object with "headless" and/or "interactive" lists',
    ],
    [
      'an unknown placeholder',
      { providers: { aider: { prompt: ['--message', '{promt}'] } } },
      'providers.aider.prompt[1]: unknown placeholder {promt} (known: {prompt}, {session_id}, {model}, {agent_dir}, {budget})',
    ],
    [
      'a bad provider name',
      { providers: { 'my agent': { command: 'x' } } },
      'providers.my agent: a provider name is letters, digits, ".", "_" and "-"',
    ],
    [
      'an empty setup list',
      { worktree: { setup: [] } },
      'worktree.setup: expected a shell command string or a non-empty list [command, ...args]',
    ],
    [
      'a setup of the wrong type',
      { worktree: { setup: 5 } },
      'worktree.setup: expected a shell command string',
    ],
    [
      'include not a list',
      { worktree: { include: '.env' } },
      'worktree.include: expected array, received string',
    ],
  ]

  test.each(cases)('%s', (_, content, detail) => {
    const s = setup()
    write(s.projectFile, content)
    const error = configError(() => s.load())
    expect(error.code).toBe('INVALID_CONFIG')
    expect(error.message.startsWith(`invalid config ${s.projectFile}: `)).toBe(true)
    expect(error.message).toContain(detail)
    // A file JSON cannot parse keeps the door's error as its cause, which quotes no byte of the file either.
    if (detail.startsWith('not valid JSON')) expect(error.cause).toBeInstanceOf(JsonTextError)
  })

  test('an error in the user file names the user file', () => {
    const s = setup()
    write(s.userFile, { defaults: { permission: 'all' } })
    write(s.projectFile, { defaults: { permission: 'readonly' } })
    expect(configError(() => s.load()).message).toContain(
      `invalid config ${s.userFile}: defaults.permission: `,
    )
  })

  test('several problems are listed together', () => {
    const s = setup()
    write(s.projectFile, { defaults: { agent: 1 }, cleanup: { older_than: 'x' } })
    expect(configError(() => s.load()).message).toMatch(/defaults\.agent: .*; cleanup\.older_than: /)
  })

  test('an unreadable file is an error, not an empty configuration', () => {
    const s = setup()
    mkdirSync(s.projectFile)
    expect(configError(() => s.load()).message).toBe(
      `invalid config ${s.projectFile}: cannot read it: a folder`,
    )
  })
})

describe('config helpers', () => {
  test('worktreeRoot resolves against the project root', () => {
    expect(worktreeRoot({}, '/p')).toBe('/p/.harness/worktrees')
    expect(worktreeRoot({ worktree: { root: '../p.worktrees' } }, '/w/p')).toBe('/w/p.worktrees')
    expect(worktreeRoot({ worktree: { root: '/elsewhere' } }, '/p')).toBe('/elsewhere')
  })

  test('worktree.setup: a string runs through sh -c, a list runs directly', () => {
    expect(worktreeSetupCommand({})).toBeNull()
    expect(worktreeSetupCommand({ worktree: { setup: 'npm ci && npm run build' } })).toEqual({
      command: 'sh',
      args: ['-c', 'npm ci && npm run build'],
    })
    expect(worktreeSetupCommand({ worktree: { setup: ['npm', 'ci'] } })).toEqual({
      command: 'npm',
      args: ['ci'],
    })
  })

  test('cleanup.older_than: default 7 days, a bare number is days', () => {
    const day = 86_400_000
    expect(cleanupOlderThanMs({})).toBe(7 * day)
    expect(cleanupOlderThanMs({ cleanup: { older_than: '30' } })).toBe(30 * day)
    expect(cleanupOlderThanMs({ cleanup: { older_than: '12h' } })).toBe(day / 2)
  })
})
