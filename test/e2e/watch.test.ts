import { afterAll, expect, test } from 'vitest'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { runsWith, tmuxMissing } from '../helpers/require.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, TmuxServer, waitFor } from '../helpers/tmux.js'

const hasTmux = runsWith('tmux', 'list --watch in a terminal', tmuxMissing())
const servers: TmuxServer[] = []
afterAll(() => {
  for (const server of servers) server.stop()
})

test.skipIf(!hasTmux)(
  'list --watch shows a status change in place; Ctrl-C leaves the terminal as it was',
  async () => {
    const repo = tmpGitRepo()
    const tmux = new TmuxServer(tmpDir())
    servers.push(tmux)
    const run = await cli(['run', '-a', 'exec', '--detach', '--json', '--', 'sleep', '60'], {
      cwd: repo.dir,
      env: repo.env,
    })
    const { id } = json<{ id: string }>(run)
    const screen = () => tmux.tmux('capture-pane', '-p', '-t', 'watch')
    await tmux.start(
      'watch',
      `cd ${shellQuote(repo.dir)}\necho BEFORE-WATCH\nread -r _\n${shellQuote(HARNESS_BIN)} session list --watch\necho "WATCH-EXITED $?"\nsleep 60`,
      repo.env,
    )
    const before = await waitFor('the shell', () =>
      screen().includes('BEFORE-WATCH') ? screen() : undefined,
    )
    tmux.sendKeys('watch', 'Enter')
    await waitFor('RUNNING on the watch screen', () => new RegExp(`${id}.*RUNNING`).test(screen()))
    expect((await cli(['session', 'kill', id], { cwd: repo.dir, env: repo.env })).exitCode).toBe(0)
    await waitFor('KILLED on the watch screen', () => new RegExp(`${id}.*KILLED`).test(screen()))
    tmux.sendKeys('watch', 'C-c')
    const after = await waitFor('the shell again', () =>
      screen().includes('WATCH-EXITED') ? screen() : undefined,
    )
    // The main screen is as it was, plus the newline typed and the line printed after harness exited.
    expect(after.trimEnd()).toBe(`${before.trimEnd()}\n\nWATCH-EXITED 0`)
  },
)
