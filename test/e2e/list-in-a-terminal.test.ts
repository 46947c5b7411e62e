import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HARNESS_BIN } from '../helpers/cli.js'
import { writeRecord } from '../helpers/sessions.js'
import { projectEnv, tmpPlainDir } from '../helpers/tmp.js'
import { shellQuote, tmuxServer, waitFor } from '../helpers/tmux.js'

const tmux = tmuxServer()

describe('session list in a real terminal', () => {
  test('colours on a TTY, none with NO_COLOR or --no-color; the table fits the terminal', async () => {
    const { dir, env } = tmpPlainDir()
    const sessions = join(dir, '.harness', 'sessions')
    mkdirSync(sessions, { recursive: true })
    const when = new Date(Date.now() - 3_600_000).toISOString()
    const record = {
      id: '3f9a12c8',
      provider: 'claude',
      status: 'FAILED',
      worktree_dir: dir,
      git_branch: 'harness/3f9a12c8',
      prompt: 'a long task '.repeat(20),
      created_at: when,
      updated_at: when,
      completed_at: when,
    }
    writeRecord(dir, projectEnv(dir), record, { pretty: false })
    const h = shellQuote(HARNESS_BIN)
    const script = `cd ${shellQuote(dir)}
unset NO_COLOR COLUMNS
${h} session list; echo END1
NO_COLOR=1 ${h} session list; echo END2
${h} session list --no-color; echo END3
sleep 60`
    await tmux.start('colours', script, env)
    const screen = await waitFor('three listings', () => {
      const text = tmux.tmux('capture-pane', '-e', '-p', '-t', 'colours')
      return text.includes('END3') ? text : undefined
    })
    const [coloured = '', noColor = '', flag = ''] = screen.split(/END\d\n/)
    expect(coloured).toContain('\u001b[31mFAILED')
    expect(noColor).toContain('FAILED')
    expect(flag).toContain('FAILED')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for colour codes is the point
    const sgr = /\u001b\[(?!0?m)[0-9;]*m/
    expect(noColor).not.toMatch(sgr)
    expect(flag).not.toMatch(sgr)
    // The pane is 120 columns wide: the long task is cut to fit.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping colour codes
    const plain = coloured.replace(/\u001b\[[0-9;]*m/g, '')
    const row = plain.split('\n').find((line) => line.startsWith('3f9a12c8')) ?? ''
    expect(row).toContain('…')
    expect(row.length).toBeLessThanOrEqual(120)
  })
})
