import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { type CliResult, cli, cliInProcess, needsProcess } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { stateOf } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

/**
 * The tests run most commands inside the test worker through the binary's own entry (test/helpers/cli.ts). Here
 * the same command lines run both ways, the binary first, and must answer alike: exit status, stdout and stderr.
 * Only what differs from one call to the next is evened out: relative times of text output ("3s ago", which may
 * tick between the two) and the spacing of the table columns around them, and the ids a planned run draws.
 */
function comparable(result: CliResult): CliResult {
  const even = (text: string) =>
    text
      .replace(/\b\d+(?:ms|[smhdw]) ago\b|\bjust now\b/g, '<ago>')
      .replace(/ +/g, ' ')
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '<uuid>')
      .replace(/\b[0-9a-f]{8}\b/g, '<id>')
  return { ...result, stdout: even(result.stdout), stderr: even(result.stderr) }
}

describe('commands run in the test worker answer as the binary does', () => {
  test('reading, planning and failing commands: same status, stdout and stderr', async () => {
    const repo = tmpGitRepo()
    const clean = await finishedSession(repo)
    const dirty = await finishedSession(repo, 'echo wip > wip.txt', ['--prompt', 'leave \x1b[2J a file'])
    const sub = join(repo.dir, 'src', 'deep')
    mkdirSync(sub, { recursive: true })
    const elsewhere = join(repo.home, 'elsewhere')
    mkdirSync(elsewhere)
    const agents = fakeAgents(repo.home, repo.env, { names: ['claude'] })
    const before = stateOf(repo)

    const lines: { args: string[]; cwd?: string; env?: NodeJS.ProcessEnv; input?: string }[] = [
      { args: ['session', 'list', '--json'] },
      { args: ['session', 'list'] },
      { args: ['session', 'show', dirty.id] },
      { args: ['--json', 'session', 'show', clean.id.slice(0, 4)] },
      { args: ['session', 'path', clean.id] },
      { args: ['session', 'path', dirty.id, '--json'], cwd: sub },
      { args: ['--dir', repo.dir, 'session', 'path', clean.id], cwd: elsewhere },
      { args: ['session', 'list', '--json'], cwd: elsewhere, env: { ...repo.env, HARNESS_DIR: repo.dir } },
      { args: ['session', 'diff', dirty.id] },
      { args: ['session', 'cleanup', '--older-than', '0', '--dry-run', '--force', '--json'] },
      { args: ['session', 'prune', '--dry-run', '--json'] },
      { args: ['session', 'recover', '--scan'] },
      // Errors: no such session (3), usage (2), an unknown command, a missing subcommand, no project, --json.
      { args: ['session', 'show', 'nope0000'] },
      { args: ['--json', 'session', 'path', 'nope0000'] },
      { args: ['session', 'list', '--status', 'bogus'] },
      { args: ['frobnicate'] },
      { args: ['--json', 'session'] },
      { args: ['session', 'list'], cwd: elsewhere },
      { args: ['session', 'show', clean.id, '--', 'extra'] },
      // Help and version, which commander writes.
      { args: ['--help'] },
      { args: ['session', '--help'] },
      { args: ['--version'] },
      // stdin: a prompt piped to a run that is only planned.
      {
        args: ['run', '--dry-run', '--json', '-a', 'claude', '-'],
        env: agents.env,
        input: 'from stdin, with "quotes"\n',
      },
    ]
    for (const line of lines) {
      const options = { cwd: line.cwd ?? repo.dir, env: line.env ?? repo.env, input: line.input }
      expect(needsProcess(line.args, options.env), line.args.join(' ')).toBe(false)
      const binary = await cli(line.args, { ...options, process: true })
      const inWorker = await cliInProcess(line.args, options)
      expect(comparable(inWorker), line.args.join(' ')).toEqual(comparable(binary))
    }
    expect(stateOf(repo)).toBe(before)
    // The piped prompt reached the planned run (the comparison above would also pass on two equal errors).
    const planned = await cliInProcess(['run', '--dry-run', '--json', '-a', 'claude', '-'], {
      cwd: repo.dir,
      env: agents.env,
      input: 'piped\n',
    })
    expect(JSON.parse(planned.stdout)).toMatchObject({ dry_run: true, prompt: 'piped' })
  }, 240_000) // about 20 binary starts: a generous ceiling for a loaded machine

  test('commands that start harness in the background, stop or follow processes always run as the binary', () => {
    const env = { HARNESS_AUTO_CLEANUP: 'off' }
    const asProcess = [
      ['run', '-a', 'exec', '--detach', '--', 'true'],
      ['--json', 'chat', '-d', '-a', 'claude'],
      ['--dir', '/x', 'session', 'resume', 'abcd', '--tmux'],
      ['session', 'continue', 'abcd', '--attach'],
      ['session', 'kill', 'abcd'],
      ['-q', 'session', 'pause', 'abcd'],
      ['session', 'attach', 'abcd'],
      ['session', 'logs', '-f', 'abcd'],
      ['session', 'logs', '-qf', 'abcd'],
      ['run', '-qd', '-a', 'exec', '--', 'true'],
      ['session', 'logs', 'abcd', '--follow'],
      ['chain', 'run', 'auth'],
      ['chain', 'kill', 'auth'],
      ['__supervise'],
      ['chain', '__chain-run', 'auth'],
    ]
    for (const args of asProcess) expect(needsProcess(args, env), args.join(' ')).toBe(true)
    // A new run starts the daily auto cleanup in the background unless it is turned off; a resume never does.
    expect(needsProcess(['run', '-a', 'exec', '--', 'true'], {})).toBe(true)
    expect(needsProcess(['session', 'resume', 'abcd'], { HARNESS_AUTO_CLEANUP: '30d' })).toBe(false)
    const inWorker = [
      ['run', '-a', 'exec', '--', 'true'],
      ['--json', 'chat', '-a', 'claude', 'fix', 'it'],
      ['session', 'resume', 'abcd', '--', '--detach'],
      ['run', '-a', 'exec', '--', 'sh', '-c', 'harness run --tmux'],
      ['session', 'logs', 'abcd'],
      ['session', 'logs', 'abcd', '--', '-f'],
      ['session', 'list', '--dir', 'run'],
      ['--dir', 'run', 'session', 'list'],
      ['chain', 'status', 'run'],
      ['session', 'show', 'kill'],
    ]
    for (const args of inWorker) expect(needsProcess(args, env), args.join(' ')).toBe(false)
  })
})
