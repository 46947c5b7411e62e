import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { type CliResult, cli, json } from '../helpers/cli.js'
import { writeRecord as writeSealed } from '../helpers/sessions.js'
import { projectEnv, tmpPlainDir } from '../helpers/tmp.js'

/** A finished session record written by hand, `daysAgo` days old. */
function writeRecord(dir: string, id: string, overrides: Record<string, unknown> = {}, daysAgo = 30): void {
  const sessions = join(dir, '.harness', 'sessions')
  mkdirSync(sessions, { recursive: true })
  const when = new Date(Date.now() - daysAgo * 86_400_000).toISOString()
  const record = {
    id,
    provider: 'claude',
    permission: 'supervised',
    status: 'COMPLETED',
    worktree_dir: dir,
    is_worktree: false,
    git_branch: `harness/${id}`,
    prompt: 'a task with several words in it that is long enough to be cut somewhere',
    created_at: when,
    updated_at: when,
    completed_at: when,
    ...overrides,
  }
  writeSealed(dir, projectEnv(dir), record)
}

/** Under --json an error leaves stdout empty and stderr holds exactly one JSON object. */
function expectJsonError(result: CliResult, exitCode: number): { code: string; message: string } {
  expect(result.exitCode, result.stderr).toBe(exitCode)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines, result.stderr).toHaveLength(1)
  const body = JSON.parse(lines[0] ?? '') as { error: { code: string; message: string; exit_code: number } }
  expect(body.error.exit_code).toBe(exitCode)
  expect(body.error.message).not.toContain('\n')
  return body.error
}

/** A human error is one `harness: …` line plus at most one `hint: …` line. */
function expectHumanError(result: CliResult, exitCode: number): string {
  expect(result.exitCode, result.stderr).toBe(exitCode)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines[0]).toMatch(/^harness: /)
  expect(lines.length, result.stderr).toBeLessThanOrEqual(2)
  if (lines[1] !== undefined) expect(lines[1]).toMatch(/^hint: /)
  return lines[0] ?? ''
}

describe('help, version and missing commands', () => {
  test('help asked for with the help command succeeds, on stdout', async () => {
    const { dir, env } = tmpPlainDir()
    for (const args of [
      ['help'],
      ['help', 'session'],
      ['help', 'session', 'list'],
      ['session', 'help', 'kill'],
    ]) {
      const result = await cli(args, { cwd: dir, env })
      expect(result.exitCode, args.join(' ')).toBe(0)
      expect(result.stdout).toMatch(/^Usage: harness/)
      expect(result.stderr).toBe('')
    }
    const list = await cli(['help', 'session', 'ls'], { cwd: dir, env })
    expect(list.stdout).toMatch(/^Usage: harness session list\|ls/)
  })

  test('help for an unknown command is a one-line usage error', async () => {
    const { dir, env } = tmpPlainDir()
    const human = await cli(['help', 'bogus'], { cwd: dir, env })
    expect(expectHumanError(human, 2)).toBe("harness: unknown command 'bogus'")
    expectJsonError(await cli(['--json', 'help', 'bogus'], { cwd: dir, env }), 2)
  })

  test('a missing command is one JSON error under --json, help on stderr otherwise', async () => {
    const { dir, env } = tmpPlainDir()
    for (const args of [['--json'], ['session', '--json'], ['--json', 'session']]) {
      const error = expectJsonError(await cli(args, { cwd: dir, env }), 2)
      expect(error.code).toBe('USAGE')
      expect(error.message).toMatch(/^missing command/)
    }
    const human = await cli(['session'], { cwd: dir, env })
    expect(human.exitCode).toBe(2)
    expect(human.stdout).toBe('')
    expect(human.stderr).toMatch(/^Usage: harness session/)
  })

  test('--version under --json is one JSON document', async () => {
    const { dir, env } = tmpPlainDir()
    const result = await cli(['--json', '--version'], { cwd: dir, env })
    expect(result.exitCode).toBe(0)
    expect(json<{ version: string }>(result).version).toMatch(/^\d+\.\d+\.\d+/)
    const plain = await cli(['-V'], { cwd: dir, env })
    expect(plain.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/)
  })
})

describe('usage errors', () => {
  test('"Did you mean" goes into the hint: the error stays one line', async () => {
    const { dir, env } = tmpPlainDir()
    const command = await cli(['session', 'lst'], { cwd: dir, env })
    expect(expectHumanError(command, 2)).toBe("harness: unknown command 'lst'")
    expect(command.stderr).toContain('hint: did you mean one of list, ls?')
    expect(command.stderr).toContain('harness session --help')

    const option = await cli(['session', 'list', '--statu', 'x'], { cwd: dir, env })
    expect(expectHumanError(option, 2)).toBe("harness: unknown option '--statu'")
    expect(option.stderr).toContain('did you mean --status?')
    expect(option.stderr).toContain('harness session list --help')

    const error = expectJsonError(await cli(['--json', 'session', 'lst'], { cwd: dir, env }), 2)
    expect(error.message).toBe("unknown command 'lst'")
  })

  test('a prompt that looks like an option points at --prompt', async () => {
    const { dir, env } = tmpPlainDir()
    const result = await cli(['run', '-v crashes'], { cwd: dir, env })
    expectHumanError(result, 2)
    expect(result.stderr).toContain('--prompt=')
    expect(existsSync(join(dir, '.harness'))).toBe(false)
  })

  test('a bad choice names the value and the accepted ones', async () => {
    const { dir, env } = tmpPlainDir()
    const status = await cli(['session', 'list', '--status', 'running,bogus'], { cwd: dir, env })
    expect(expectHumanError(status, 2)).toBe(
      'harness: invalid value "bogus" for --status: expected one of running, paused, completed, failed, killed',
    )
    const sort = await cli(['session', 'list', '--sort', 'size', '--json'], { cwd: dir, env })
    expect(expectJsonError(sort, 2).message).toBe(
      'invalid value "size" for --sort: expected one of created, updated',
    )
    const permission = await cli(['run', '-P', 'root', 'x'], { cwd: dir, env })
    expect(expectHumanError(permission, 2)).toContain('expected one of readonly, supervised, autonomous')
  })

  test('--dir or HARNESS_DIR naming a folder that does not exist is a usage error, and creates nothing', async () => {
    const { dir, env } = tmpPlainDir()
    const missing = join(dir, 'no-such-project')
    expectHumanError(await cli(['--dir', missing, 'session', 'list'], { cwd: dir, env }), 2)
    expectJsonError(
      await cli(['session', 'list', '--json'], { cwd: dir, env: { ...env, HARNESS_DIR: missing } }),
      2,
    )
    expectHumanError(await cli(['--dir', missing, 'run', '-a', 'exec', '--', 'true'], { cwd: dir, env }), 2)
    expect(existsSync(missing)).toBe(false)

    // The project's .harness folder itself may not exist yet: that is an empty project.
    const empty = await cli(['--dir', join(dir, '.harness'), 'session', 'list', '--json'], { cwd: dir, env })
    expect(empty.exitCode, empty.stderr).toBe(0)
    expect(json(empty)).toEqual([])
  })
})

describe('human output', () => {
  test('the session table fits narrow terminals by leaving out BRANCH, then AGENT', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, '3f9a12c8')
    writeRecord(dir, '77bf894d', { status: 'FAILED', provider: 'opencode' }, 40)
    for (const columns of [80, 60, 50, 40]) {
      const result = await cli(['session', 'list'], { cwd: dir, env: { ...env, COLUMNS: String(columns) } })
      expect(result.exitCode).toBe(0)
      const lines = result.stdout.trimEnd().split('\n')
      for (const line of lines) expect([...line].length, `${columns}: ${line}`).toBeLessThanOrEqual(columns)
      expect(lines[0]).toMatch(/^ID\s+.*STATUS\s+.*AGE\s+TASK$/)
    }
    const narrow = await cli(['session', 'list'], { cwd: dir, env: { ...env, COLUMNS: '40' } })
    expect(narrow.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+AGE\s+TASK$/)
  })

  test('wide characters count two columns when the table is fitted', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, 'cjk00001', { prompt: '修复登录错误并添加测试用例'.repeat(4) })
    const columns = (line: string) => [...line].reduce((n, c) => n + (/[\u4e00-\u9fff]/.test(c) ? 2 : 1), 0)
    for (const width of [80, 60]) {
      const result = await cli(['session', 'list'], { cwd: dir, env: { ...env, COLUMNS: String(width) } })
      expect(result.exitCode).toBe(0)
      for (const line of result.stdout.trimEnd().split('\n'))
        expect(columns(line), line).toBeLessThanOrEqual(width)
      expect(result.stdout).toContain('…')
    }
  })

  test('show keeps a multi-line task under its label', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, '3f9a12c8', { prompt: 'line one\nline two' })
    const result = await cli(['session', 'show', '3f9a'], { cwd: dir, env })
    expect(result.exitCode, result.stderr).toBe(0)
    const lines = result.stdout.split('\n')
    const task = lines.findIndex((line) => line.startsWith('Task:'))
    const valueColumn = (lines[task] ?? '').indexOf('line one')
    expect(lines[task + 1]).toBe(`${' '.repeat(valueColumn)}line two`)
    for (const line of lines.slice(0, task + 3)) expect(line).toMatch(/^([A-Z][\w ]*:\s|\s{2,}\S)/)
  })

  test('the cleanup report lines up ids, statuses and ages', async () => {
    const { dir, env } = tmpPlainDir()
    writeRecord(dir, 'abcd1')
    writeRecord(dir, '3f9a12c8', { status: 'FAILED' })
    const result = await cli(['session', 'cleanup', '--dry-run'], { cwd: dir, env })
    expect(result.exitCode, result.stderr).toBe(0)
    const rows = result.stdout.split('\n').filter((line) => /^ {2}\S/.test(line))
    expect(rows).toHaveLength(2)
    const ageColumn = rows.map((line) => line.indexOf(' ago'))
    const statusColumn = rows.map((line) => line.search(/COMPLETED|FAILED/))
    expect(new Set(ageColumn).size).toBe(1)
    expect(new Set(statusColumn).size).toBe(1)
  })

  test('recover --scan is an aligned table', async () => {
    const { dir, env } = tmpPlainDir()
    // RUNNING without process start times: unverified, so never touched by reading it.
    writeRecord(dir, 'abcd1', { status: 'RUNNING', completed_at: null, pid: 999_999 })
    writeRecord(dir, '3f9a12c8', {
      status: 'RUNNING',
      completed_at: null,
      pid: 999_998,
      provider: 'opencode',
    })
    const result = await cli(['session', 'recover', '--scan'], { cwd: dir, env })
    expect(result.exitCode, result.stderr).toBe(0)
    const lines = result.stdout.split('\n')
    expect(lines[0]).toMatch(/^ID\s+AGENT\s+LIVENESS\s+TASK$/)
    const rows = lines.slice(1, 3)
    expect(new Set(rows.map((line) => line.indexOf('unverified'))).size).toBe(1)
  })
})
