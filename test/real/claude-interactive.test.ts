import { existsSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { TmuxServer, waitFor } from '../helpers/tmux.js'
import { installClis } from './install.js'
import { anthropicHasToolResult, anthropicServer, type ScriptedServer } from './model-server.js'

/**
 * claude (the real CLI from npm) through `harness run --tmux`, against a scripted Anthropic server on loopback
 * whose first answer is a Write: what the screen shows, what harness records as its state, what the tool did.
 */
type Rec = Record<string, unknown> & { id: string; status: string; state?: string; worktree_dir: string }

const KEY = 'sk-ant-scripted-test-key-interactive'
let bin: string | undefined
const tmux = new TmuxServer(tmpDir())
const servers: ScriptedServer[] = []
beforeAll(async () => {
  const installed = await installClis()
  bin = installed.bin
  if (installed.reason) console.log(`real claude interactive: skipped, ${installed.reason}`)
}, 600_000)
afterAll(async () => {
  tmux.stop()
  await Promise.all(servers.map((s) => s.close()))
})

async function setup() {
  const model = await anthropicServer((request) => {
    if (anthropicHasToolResult(request)) return null
    // claude 2.1.332: " - Primary working directory: <dir>" in its system prompt.
    const cwd = /working directory: ([^\s"\\]+)/i.exec(request.text)?.[1] ?? '/nonexistent'
    return { name: 'Write', input: { file_path: join(cwd, 'made-by-agent.txt'), content: 'hello\n' } }
  })
  servers.push(model)
  const repo = tmpGitRepo()
  // What a user who set claude up once has: onboarding done, the key approved (its last 20 characters), the
  // repository trusted (its worktrees are inside it). Without them claude asks first (test/fixtures/screens).
  writeFileSync(
    join(repo.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] },
      projects: { [repo.dir]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }),
  )
  const env: NodeJS.ProcessEnv = {
    ...repo.env,
    PATH: `${bin}${delimiter}${repo.env.PATH ?? ''}`,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    IS_SANDBOX: '1',
    HARNESS_TMUX_SOCKET: tmux.socket,
  }
  const harness = (args: string[]) => cli(args, { cwd: repo.dir, env, timeoutMs: 150_000, process: true })
  return { repo, harness }
}

/** Polls an asynchronous probe (the record, through harness) until it holds. */
async function until(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

const show = async (harness: Awaited<ReturnType<typeof setup>>['harness'], id: string) =>
  json<Rec>(await harness(['session', 'show', id, '--json']))

describe('claude, the real CLI, interactive in tmux', () => {
  test('supervised: the permission prompt is on screen, state waiting; answering it runs the Write in the worktree', async (ctx) => {
    if (!bin) return ctx.skip()
    const { repo, harness } = await setup()
    const started = await harness([
      'run',
      '--tmux',
      '-a',
      'claude',
      '-P',
      'supervised',
      '--json',
      'make the change',
    ])
    expect(started.exitCode, started.stderr).toBe(0)
    const { id } = json<Rec>(started)
    const pane = `harness-${id}`
    await waitFor(
      'the permission prompt',
      () => tmux.tmux('capture-pane', '-p', '-t', pane).includes('Do you want to create made-by-agent.txt?'),
      120_000,
    )
    await until('state waiting', async () => (await show(harness, id)).state === 'waiting', 30_000)
    const record = await show(harness, id)
    expect(existsSync(join(record.worktree_dir, 'made-by-agent.txt'))).toBe(false)
    tmux.sendKeys(pane, 'Enter')
    await waitFor('the Write', () => existsSync(join(record.worktree_dir, 'made-by-agent.txt')), 60_000)
    expect(existsSync(join(repo.dir, 'made-by-agent.txt'))).toBe(false)
    await until('state idle', async () => (await show(harness, id)).state === 'idle', 60_000)
    expect((await harness(['session', 'kill', id])).exitCode).toBe(0)
  }, 300_000)

  test('autonomous: claude asks once to accept its bypass mode (state waiting); then the Write runs without a prompt', async (ctx) => {
    if (!bin) return ctx.skip()
    const { harness } = await setup()
    const started = await harness([
      'run',
      '--tmux',
      '-a',
      'claude',
      '-P',
      'autonomous',
      '--json',
      'make the change',
    ])
    expect(started.exitCode, started.stderr).toBe(0)
    const { id } = json<Rec>(started)
    const pane = `harness-${id}`
    // claude 2.1.332's --dangerously-skip-permissions: "WARNING: Claude Code running in Bypass Permissions mode"
    // over "❯ No, exit / Yes, I accept", until a HOME has accepted it once.
    await waitFor(
      'the bypass warning',
      () => tmux.tmux('capture-pane', '-p', '-t', pane).includes('Bypass Permissions mode'),
      120_000,
    )
    await until('state waiting', async () => (await show(harness, id)).state === 'waiting', 30_000)
    tmux.sendKeys(pane, 'Down')
    tmux.sendKeys(pane, 'Enter')
    const record = await show(harness, id)
    await waitFor('the Write', () => existsSync(join(record.worktree_dir, 'made-by-agent.txt')), 120_000)
    expect(tmux.tmux('capture-pane', '-p', '-t', pane)).not.toContain('Do you want to create')
    expect((await harness(['session', 'kill', id])).exitCode).toBe(0)
  }, 300_000)
})
