import { Readable } from 'node:stream'
import { describe, expect, test } from 'vitest'
import { CliDashboard } from '../../../src/cli/dashboard.js'
import { FdWriter } from '../../../src/cli/fd-writer.js'
import { Output } from '../../../src/cli/output.js'
import type { DashboardSession } from '../../../src/ui/port.js'
import { cli, json } from '../../helpers/cli.js'
import { type TmpRepo, tmpGitRepo } from '../../helpers/tmp.js'

// The dashboard's port over a real project: it lists what `session list` lists and acts through the commands'
// services, answering with what those commands print, their errors included, and never writes to the terminal.

function dashboard(repo: TmpRepo, options: { allProjects?: boolean } = {}): CliDashboard {
  const io = { cwd: repo.dir, env: repo.env, stdin: Readable.from([]), stdinIsTerminal: () => true }
  // Writing to the terminal would write over the dashboard: any write here fails the test.
  const screen = new FdWriter(-1)
  screen.write = () => {
    throw new Error('the port wrote to the terminal')
  }
  const out = new Output({ json: false, color: false, quiet: false }, screen, screen, repo.env)
  return new CliDashboard({
    io,
    out,
    allProjects: options.allProjects === true,
    agents: ['claude', 'exec'],
    backends: ['local', 'container'],
  })
}

async function finishedSession(repo: TmpRepo, script: string): Promise<string> {
  const run = await cli(['run', '--json', '-a', 'exec', '--', 'sh', '-c', script], {
    cwd: repo.dir,
    env: repo.env,
  })
  expect(run.exitCode, run.stderr).toBe(0)
  return json<{ id: string }>(run).id
}

const find = async (port: CliDashboard, id: string): Promise<DashboardSession> => {
  const listing = await port.sessions()
  const session = listing.sessions.find((s) => s.id === id)
  if (!session) throw new Error(`${id} not listed: ${JSON.stringify(listing)}`)
  return session
}

describe('the dashboard port', () => {
  test('lists, shows a detail, a diff and a log, merges after its dry run', {
    tags: ['process'],
  }, async () => {
    const repo = tmpGitRepo()
    const id = await finishedSession(repo, 'echo made > made.txt; echo "the \u001b[31mend\u001b[0m"')
    const port = dashboard(repo)
    await port.open()
    expect(port.title).toBe('repo')
    const session = await find(port, id)
    expect(session).toMatchObject({ status: 'COMPLETED', agent: 'exec', state: '', tmux: false })

    const detail = await port.detail(session)
    expect(detail.diff.join('\n')).toMatch(/made\.txt/)
    expect(detail.checkpoints.join('\n')).toMatch(/run-end|end/)
    expect(detail.log.join('\n')).toContain('the \\x1b[31mend\\x1b[0m')

    const diff = await port.diff(session)
    expect(diff).toMatchObject({ ok: true })
    if (diff.ok) expect(diff.lines).toContain('+made')

    const preview = await port.mergePreview(session)
    expect(preview).toMatchObject({ ok: true, canMerge: true })
    if (preview.ok) expect(preview.lines.join('\n')).toMatch(/would land branch harness\//)
    const merged = await port.merge(session)
    expect(merged).toMatchObject({ ok: true })
    if (merged.ok) expect(merged.message).toMatch(/merged branch harness\//)
    expect(repo.git('log', '-1', '--format=%s')).toMatch(/Merge|made/)
  })

  test("a refused action answers with the command's own error and hint", { tags: ['process'] }, async () => {
    const repo = tmpGitRepo()
    const id = await finishedSession(repo, 'true')
    const port = dashboard(repo)
    const session = await find(port, id)
    const kill = await port.stop(session, 'kill')
    expect(kill).toEqual({
      ok: false,
      error: expect.stringMatching(new RegExp(`^harness: session "${id}" is COMPLETED`)),
    })
    const send = await port.send(session, 'yes')
    expect(send).toMatchObject({ ok: false, error: expect.stringMatching(/not hosted in tmux/) })
    const sent = await port.send(session, 'two\nlines')
    expect(sent).toMatchObject({ ok: false, error: expect.stringMatching(/control character/) })
    const start = await port.start({ agent: 'exec', task: 'echo hi', backend: 'local', host: 'detached' })
    // `n` with the exec agent: the error and hint `harness run -a exec "echo hi"` prints.
    expect(start).toEqual({
      ok: false,
      error: expect.stringMatching(/^harness: exec needs a command after --\nhint: /),
    })
  })

  test('a project without sessions lists none; its folder is watched once it exists', async () => {
    const repo = tmpGitRepo()
    const port = dashboard(repo)
    const listing = await port.sessions()
    expect(listing).toEqual({ sessions: [], warnings: [] })
    let changes = 0
    const stop = port.watch(() => changes++)
    stop()
    expect(changes).toBe(0)
  })
})
