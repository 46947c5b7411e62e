import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect } from 'vitest'
import { tmuxServer, waitFor } from '../helpers/tmux.js'
import {
  claudeEnv,
  claudeWorkingDirectory,
  claudeWrite,
  cliTest,
  FILE,
  FIRST_PROMPT,
  type Project,
  recordOf,
  scriptedProjects,
  show,
  useInstalledClis,
} from './drive.js'
import { anthropicHasToolResult, anthropicServer } from './model-server.js'

/**
 * claude (the real CLI from npm) through `harness run --tmux`, against a scripted Anthropic server on loopback
 * whose first answer is a Write: what the screen shows, what harness records as its state, what the tool did.
 */
useInstalledClis('claude interactive')
const tmux = tmuxServer()

const KEY = 'sk-ant-scripted-test-key-interactive'
const scripted = scriptedProjects((url) => ({
  env: { ...claudeEnv(url, KEY), HARNESS_TMUX_SOCKET: tmux.socket },
}))

async function setup(): Promise<Project> {
  const made = await scripted(
    anthropicServer((request) =>
      anthropicHasToolResult(request) ? null : claudeWrite(claudeWorkingDirectory(request)),
    ),
  )
  // What a user who set claude up once has: onboarding done, the key approved (its last 20 characters), the
  // repository trusted (its worktrees are inside it). Without them claude asks first (test/fixtures/screens).
  writeFileSync(
    join(made.repo.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
      projects: { [made.repo.dir]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }),
  )
  return made
}

/** Polls an asynchronous probe (the record, through harness) until it holds. */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * `harness run --tmux` at `level` in a fresh project, until `question` (what claude asks first) is on the
 * pane's screen and the record's state is waiting.
 */
async function startUntilAsked(level: string, what: string, question: string) {
  const made = await setup()
  const { result, record } = await recordOf(made.harness, [
    'run',
    '--tmux',
    '-a',
    'claude',
    '-P',
    level,
    FIRST_PROMPT,
  ])
  expect(result.exitCode, result.stderr).toBe(0)
  const pane = `harness-${record.id}`
  const screen = () => tmux.tmux('capture-pane', '-p', '-t', pane)
  await waitFor(what, () => screen().includes(question), 120_000)
  await until('state waiting', async () => (await show(made.harness, record.id)).state === 'waiting', 30_000)
  return { ...made, id: record.id, pane, screen }
}

describe('claude, the real CLI, interactive in tmux', () => {
  cliTest(
    'supervised: the permission prompt is on screen, state waiting; answering it runs the Write in the worktree',
    async () => {
      const { repo, harness, id, pane } = await startUntilAsked(
        'supervised',
        'the permission prompt',
        `Do you want to create ${FILE}?`,
      )
      const record = await show(harness, id)
      expect(existsSync(join(record.worktree_dir, FILE))).toBe(false)
      tmux.sendKeys(pane, 'Enter')
      await waitFor('the Write', () => existsSync(join(record.worktree_dir, FILE)), 60_000)
      expect(existsSync(join(repo.dir, FILE))).toBe(false)
      await until('state idle', async () => (await show(harness, id)).state === 'idle', 60_000)
      expect((await harness(['session', 'kill', id])).exitCode).toBe(0)
    },
    300_000,
  )

  cliTest(
    'autonomous: claude asks once to accept its bypass mode (state waiting); then the Write runs without a prompt',
    async () => {
      // claude 2.1.332's --dangerously-skip-permissions: "WARNING: Claude Code running in Bypass Permissions
      // mode" over "❯ No, exit / Yes, I accept", until a HOME has accepted it once.
      const { harness, id, pane, screen } = await startUntilAsked(
        'autonomous',
        'the bypass warning',
        'Bypass Permissions mode',
      )
      tmux.sendKeys(pane, 'Down')
      tmux.sendKeys(pane, 'Enter')
      const record = await show(harness, id)
      await waitFor('the Write', () => existsSync(join(record.worktree_dir, FILE)), 120_000)
      expect(screen()).not.toContain('Do you want to create')
      expect((await harness(['session', 'kill', id])).exitCode).toBe(0)
    },
    300_000,
  )
})
