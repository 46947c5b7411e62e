import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, HARNESS_BIN, json, NODE_ENTRY } from '../helpers/cli.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, tmuxServers, waitFor } from '../helpers/tmux.js'

// `harness ui` in a real terminal: a pane of a tmux server playing the user's terminal, keys typed with
// send-keys, the screen read with capture-pane. A second private server is harness's own (the agents run
// there in tmux). Every step waits for what the screen or a record shows, with a generous ceiling.

type Rec = { id: string; status: string; state?: string | null; prompt?: string; merged_at?: string | null }

const { harnessTmux, userTmux } = tmuxServers()

/** The screen as the user sees it, wrapped lines joined (so that a line too wide for the screen shows). */
const screen = (pane: string) => userTmux.tmux('capture-pane', '-p', '-J', '-t', pane)
const lines = (pane: string) => screen(pane).split('\n')

async function until(pane: string, what: string, test: (text: string) => boolean): Promise<string> {
  try {
    return await waitFor(what, () => {
      const text = screen(pane)
      return test(text) ? text : undefined
    })
  } catch (error) {
    throw new Error(`${(error as Error).message}; the screen:\n${screen(pane)}`)
  }
}

/** The list (not the help, a pager or the form), by its title. */
const onList = (s: string) => /^harness ui: (repo|all projects) ·/m.test(s)

const selectedLine = (pane: string) => lines(pane).find((l) => l.startsWith('› ')) ?? ''

/** Moves the selection to `id`, one key at a time, each time waiting for the marker to move. */
async function select(pane: string, id: string): Promise<void> {
  for (let step = 0; step < 30; step++) {
    const now = lines(pane)
    const at = now.findIndex((l) => l.startsWith(`› ${id}`))
    if (at >= 0) return
    const selected = now.findIndex((l) => l.startsWith('› '))
    const target = now.findIndex((l) => l.startsWith(`  ${id}`))
    if (target < 0) throw new Error(`${id} is not on the screen:\n${now.join('\n')}`)
    const before = selectedLine(pane)
    userTmux.sendKeys(pane, target > selected ? 'Down' : 'Up')
    await waitFor('the selection to move', () => selectedLine(pane) !== before)
  }
  throw new Error(`could not select ${id}`)
}

const record = (dir: string, id: string) => readRecords<Rec>(dir).find((r) => r.id === id)

/** The dashboard in a pane of the user's terminal; when it ends, the shell notes its exit and the terminal's modes. */
async function openUi(name: string, dir: string, env: NodeJS.ProcessEnv, size = { x: 120, y: 40 }) {
  const done = join(dir, '..', `${name}.exit`)
  const script = [
    `cd ${shellQuote(dir)}`,
    'echo BEFORE-UI',
    'read -r _',
    `${shellQuote(HARNESS_BIN)} ui`,
    `echo "UI-EXITED $?"`,
    `stty -a > ${shellQuote(done)}`,
    'sleep 600',
  ].join('\n')
  await userTmux.start(name, script, env)
  userTmux.tmux('resize-window', '-t', name, '-x', String(size.x), '-y', String(size.y))
  const before = await until(name, 'the shell', (s) => s.includes('BEFORE-UI'))
  userTmux.sendKeys(name, 'Enter')
  await until(name, 'the dashboard', (s) => s.includes('harness ui: '))
  return { before, done }
}

function setup() {
  const repo = tmpGitRepo()
  const askFile = join(repo.home, 'ask')
  const agents = fakeAgents(repo.home, repo.env, { tui: { askFile }, sleepMs: 600_000 })
  // CI set as it is in CI: the dashboard still draws (Ink alone would draw nothing until it exits).
  const env: NodeJS.ProcessEnv = { ...agents.env, HARNESS_TMUX_SOCKET: harnessTmux.socket, CI: 'true' }
  return { repo, agents, askFile, env }
}

/** Every line fits `width`, and each session's row holds its whole id and status. */
function fits(text: string, width: number, rows: { id: string; status: string }[]): boolean {
  const all = text.split('\n')
  return (
    all.every((l) => [...l].length <= width) &&
    rows.every((r) => all.some((l) => l.includes(r.id) && new RegExp(`\\b${r.status}\\b`).test(l)))
  )
}

describe('harness ui in a terminal', () => {
  test('three sessions with their states; waiting shows without a key; s, enter, l, d, m, k, p, r, n, /, ?, a failed action, q', async () => {
    const { repo, agents, askFile, env } = setup()
    const tmuxRun = await cli(['run', '--tmux', '--json', '-a', 'claude', 'draw and ask'], {
      cwd: repo.dir,
      env,
    })
    expect(tmuxRun.exitCode, tmuxRun.stderr).toBe(0)
    const a = json<Rec>(tmuxRun).id
    const background = await cli(
      ['run', '--detach', '--json', '-a', 'exec', '--', 'sh', '-c', 'echo background says hi; sleep 600'],
      {
        cwd: repo.dir,
        env,
      },
    )
    const b = json<Rec>(background).id
    const finished = await cli(
      ['run', '--json', '-a', 'exec', '--', 'sh', '-c', 'echo made > made.txt; echo finished'],
      {
        cwd: repo.dir,
        env,
      },
    )
    const c = json<Rec>(finished).id
    await waitFor('state busy', () => record(repo.dir, a)?.state === 'busy')

    const { before, done } = await openUi('main', repo.dir, env)
    const rowOf = (text: string, id: string) => text.split('\n').find((l) => l.includes(id)) ?? ''
    await until(
      'main',
      'the three sessions with their states',
      (s) =>
        /RUNNING +busy/.test(rowOf(s, a)) &&
        /RUNNING +-/.test(rowOf(s, b)) &&
        /COMPLETED +-/.test(rowOf(s, c)),
    )
    // Newest first: the finished one is selected.
    await until('main', 'the newest selected', (s) => new RegExp(`^› ${c}`, 'm').test(s))

    // The agent asks: the dashboard shows it waiting, no key pressed.
    writeFileSync(askFile, '')
    await until('main', 'waiting', (s) => /RUNNING +waiting/.test(rowOf(s, a)) && s.includes('1 waiting'))

    // s: a line typed into the agent; it answers and works again.
    await select('main', a)
    userTmux.sendKeys('main', 's')
    await until('main', 'the send prompt', (s) => s.includes(`send to ${a}: `))
    userTmux.sendKeys('main', '1', 'Enter')
    await until('main', 'sent', (s) => s.includes(`sent to ${a}`))
    await waitFor('the answer', () => agents.entries().find((e) => e.event === 'answer'))
    expect(agents.entries().find((e) => e.event === 'answer')).toMatchObject({ text: '1' })
    await until('main', 'busy again', (s) => /RUNNING +busy/.test(rowOf(s, a)))

    // enter on a tmux session: attached (the dashboard runs inside tmux itself); detached, the dashboard again.
    userTmux.sendKeys('main', 'Enter')
    await until(
      'main',
      "the agent's screen",
      (s) => s.includes('Working… (esc to interrupt)') && !s.includes('harness ui:'),
    )
    userTmux.sendKeys('main', 'C-b', 'd')
    await until(
      'main',
      'the dashboard again',
      (s) => s.includes('harness ui: ') && s.includes(`detached from ${a}`),
    )
    await until('main', 'the same selection', (s) => new RegExp(`^› ${a}`, 'm').test(s))

    // enter on a background session follows its log; q comes back.
    await select('main', b)
    userTmux.sendKeys('main', 'Enter')
    await until(
      'main',
      'the followed log',
      (s) => s.includes(`following the log of ${b}`) && s.includes('background says hi'),
    )
    userTmux.sendKeys('main', 'q')
    await until('main', 'the list', onList)

    // l: the log; d: the diff.
    await select('main', c)
    userTmux.sendKeys('main', 'l')
    await until('main', 'the log', (s) => s.includes(`log of ${c}`) && s.includes('finished'))
    userTmux.sendKeys('main', 'Escape')
    await until('main', 'the list', onList)
    userTmux.sendKeys('main', 'd')
    await until('main', 'the diff', (s) => s.includes(`diff of ${c}`) && s.includes('+made'))
    userTmux.sendKeys('main', 'q')
    await until('main', 'the list', onList)

    // A failed action shows the command's error, and the screen goes on working.
    userTmux.sendKeys('main', 'p')
    await until('main', 'the error', (s) => s.includes(`harness: session "${c}" is COMPLETED`))
    userTmux.sendKeys('main', '?')
    await until('main', 'the help', (s) => s.includes('harness ui: keys') && s.includes('m  '))
    userTmux.sendKeys('main', 'x')
    await until('main', 'the list', onList)

    // m: the dry run first, then y merges.
    userTmux.sendKeys('main', 'm')
    await until(
      'main',
      'the dry run',
      (s) => s.includes(`merge ${c}: dry run`) && s.includes('would land branch'),
    )
    userTmux.sendKeys('main', 'y')
    await until('main', 'merged', (s) => s.includes(`merged branch harness/${c}`))
    expect(repo.git('show', 'HEAD:made.txt')).toBe('made')

    // k asks, then kills.
    await select('main', b)
    userTmux.sendKeys('main', 'k')
    await until('main', 'the question', (s) => s.includes(`kill session ${b} and everything it started? y/n`))
    userTmux.sendKeys('main', 'y')
    await until('main', 'killed', (s) => s.includes(`session ${b} killed`) && /KILLED/.test(rowOf(s, b)))
    expect(record(repo.dir, b)?.status).toBe('KILLED')

    // p pauses the tmux session, r resumes it into tmux.
    await select('main', a)
    userTmux.sendKeys('main', 'p')
    await until('main', 'paused', (s) => s.includes(`session ${a} paused`) && /PAUSED/.test(rowOf(s, a)))
    expect(record(repo.dir, a)?.status).toBe('PAUSED')
    userTmux.sendKeys('main', 'r')
    await until('main', 'resumed', (s) => s.includes(`harness: session ${a} `) && /RUNNING/.test(rowOf(s, a)))
    expect(record(repo.dir, a)?.status).toBe('RUNNING')
    expect(harnessTmux.tmux('has-session', '-t', `=harness-${a}`)).toBe('')

    // n: a new session, in the background, never in this terminal.
    userTmux.sendKeys('main', 'n')
    await until('main', 'the form', (s) => s.includes('New session') && s.includes('agent:    ‹ claude ›'))
    userTmux.sendKeys('main', '-l', 'write the docs')
    userTmux.sendKeys('main', 'Enter')
    const made = await waitFor('the new record', () =>
      readRecords<Rec>(repo.dir).find((r) => r.prompt === 'write the docs'),
    )
    await until('main', 'the new session listed', (s) => s.includes(made.id) && s.includes('write the docs'))
    await waitFor('it runs', () => record(repo.dir, made.id)?.status === 'RUNNING')

    // /: only what matches; Esc shows all again.
    userTmux.sendKeys('main', '/')
    userTmux.sendKeys('main', '-l', c)
    userTmux.sendKeys('main', 'Enter')
    const listed = (s: string, id: string) => new RegExp(`^[› ] ${id} `, 'm').test(s)
    await until(
      'main',
      'the filtered list',
      (s) => s.includes(`filter: ${c}`) && listed(s, c) && !listed(s, b),
    )
    userTmux.sendKeys('main', 'Escape')
    await until('main', 'every session', (s) => listed(s, c) && listed(s, b) && !s.includes('filter:'))

    // q: the terminal as it was (main screen, cooked mode, echo).
    userTmux.sendKeys('main', 'q')
    const after = await until('main', 'the shell', (s) => s.includes('UI-EXITED 0'))
    // The main screen as it was, with the line tmux itself prints when a client detaches (attach above).
    const shown = after.trimEnd().replace(/\n\[detached \(from session harness-\w+\)\]/, '')
    expect(shown).toBe(`${before.trimEnd()}\n\nUI-EXITED 0`)
    const modes = await waitFor('stty', () => {
      try {
        return readFileSync(done, 'utf8')
      } catch {
        return undefined
      }
    })
    expect(modes).toMatch(/(^|\s)icanon(\s|$)/m)
    expect(modes).toMatch(/(^|\s)echo(\s|$)/m)

    for (const id of [a, made.id]) await cli(['session', 'kill', id], { cwd: repo.dir, env })
  })

  test('at 120×40 and 60×20 every line fits and no id or status is cut; resizing redraws; 30×8 is too small', async () => {
    const { repo, env } = setup()
    const ids: { id: string; status: string }[] = []
    for (const task of ['first', 'second', 'a rather long task that will not fit in sixty columns at all']) {
      const run = await cli(['run', '--json', '-a', 'exec', '--', 'sh', '-c', `echo ${shellQuote(task)}`], {
        cwd: repo.dir,
        env,
      })
      ids.push({ id: json<Rec>(run).id, status: 'COMPLETED' })
    }
    await openUi('sizes', repo.dir, env)
    await until('sizes', 'a fitted screen at 120×40', (s) => fits(s, 120, ids) && s.includes('q quit'))
    userTmux.tmux('resize-window', '-t', 'sizes', '-x', '60', '-y', '20')
    await until('sizes', 'a fitted screen at 60×20', (s) => fits(s, 60, ids))
    userTmux.tmux('resize-window', '-t', 'sizes', '-x', '30', '-y', '8')
    await until('sizes', 'too small', (s) => s.includes('terminal too small') && fits(s, 30, []))
    userTmux.tmux('resize-window', '-t', 'sizes', '-x', '80', '-y', '24')
    await until('sizes', 'the list again', (s) => fits(s, 80, ids))
    userTmux.sendKeys('sizes', 'q')
    await until('sizes', 'the shell', (s) => s.includes('UI-EXITED 0'))
  })

  test('no sessions: says so, and that n starts one', async () => {
    const { repo, env } = setup()
    await openUi('empty', repo.dir, env)
    await until('empty', 'the empty message', (s) => s.includes('No sessions yet. Press n to start one.'))
    userTmux.sendKeys('empty', 'q')
    await until('empty', 'the shell', (s) => s.includes('UI-EXITED 0'))
  })

  test('without a terminal it says so and exits 2', async () => {
    const repo = tmpGitRepo()
    const result = await cli(['ui'], { cwd: repo.dir, env: repo.env, process: true })
    expect(result.exitCode).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(
      'harness: harness ui needs a terminal (stdin and stdout)\nhint: for scripts: harness session list --json\n',
    )
    const listed = execFileSync(HARNESS_BIN, ['--help'], { env: repo.env, encoding: 'utf8' })
    expect(listed).toMatch(/\n {2}ui .*dashboard/)
  })

  test('other commands never load the dashboard chunk (node: a copy whose chunk throws when loaded)', async () => {
    const repo = tmpGitRepo()
    const id = json<Rec>(
      await cli(['run', '--json', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env: repo.env }),
    ).id
    // The node runtime as installed, but the dashboard's chunk replaced by one that fails as it loads.
    const pkg = join(tmpDir(), 'pkg')
    const dist = join(NODE_ENTRY, '..', '..', 'dist')
    for (const folder of ['bin', 'dist/ui']) mkdirSync(join(pkg, folder), { recursive: true })
    copyFileSync(NODE_ENTRY, join(pkg, 'bin', 'harness.cjs'))
    for (const file of ['harness.cjs', 'harness.cjs.cache', 'fast.cjs', 'ui/load.cjs']) {
      copyFileSync(join(dist, file), join(pkg, 'dist', file))
    }
    writeFileSync(join(pkg, 'dist', 'ui', 'dashboard.mjs'), "throw new Error('DASHBOARD-CHUNK-LOADED')\n")
    const entry = join(pkg, 'bin', 'harness.cjs')
    // The bundle itself answers (no small entry), as for every command it does not answer.
    const env = { ...repo.env, HARNESS_NO_FAST_PATH: '1' }
    for (const args of [
      ['session', 'path', id],
      ['session', 'list'],
      ['session', 'show', id],
      ['--help'],
      ['session', 'diff', id],
    ]) {
      const out = execFileSync(process.execPath, [entry, ...args], { cwd: repo.dir, env, encoding: 'utf8' })
      expect(out, args.join(' ')).not.toContain('DASHBOARD')
    }
    // ui does load it: the same copy, in a terminal, fails with the chunk's error.
    await userTmux.start(
      'chunk',
      `cd ${shellQuote(repo.dir)}\n${shellQuote(process.execPath)} ${shellQuote(entry)} ui; echo "UI-EXITED $?"\nsleep 600`,
      env,
    )
    await until(
      'chunk',
      "the chunk's error",
      (s) => s.includes('DASHBOARD-CHUNK-LOADED') && s.includes('UI-EXITED 1'),
    )
  })
})
