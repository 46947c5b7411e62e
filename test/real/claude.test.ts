import { existsSync, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { tmpGitRepo } from '../helpers/tmp.js'
import { installClis } from './install.js'
import {
  anthropicHasToolResult,
  anthropicServer,
  type RecordedRequest,
  type ScriptedServer,
  USAGE,
} from './model-server.js'

/**
 * claude (the real CLI from npm) through harness, headless, against a scripted Anthropic Messages server on
 * loopback: what each level lets its tool call do, the exact resume, and the usage harness records.
 */
type Run = { n: number; usage?: { input_tokens?: number; output_tokens?: number } | null }
type Rec = Record<string, unknown> & { id: string; status: string; worktree_dir: string; runs: Run[] }

let bin: string | undefined
let skipped: string | undefined
beforeAll(async () => {
  const installed = await installClis()
  bin = installed.bin
  skipped = installed.reason
  if (skipped) console.log(`real claude: skipped, ${skipped}`)
}, 600_000)

/** The worktree claude was started in, as its system prompt tells the model. */
function workingDirectory(request: RecordedRequest): string {
  // claude 2.1.332: " - Primary working directory: <dir>" in its system prompt.
  const match = /working directory: ([^\s"\\]+)/i.exec(request.text)
  return match?.[1] ?? '/nonexistent'
}

/** A server whose first answer is one tool call, then a final text; `tool` makes the call from the request. */
async function server(tool: (cwd: string) => { name: string; input: Record<string, unknown> }) {
  return anthropicServer((request) =>
    anthropicHasToolResult(request) ? null : tool(workingDirectory(request)),
  )
}

function setup(model: ScriptedServer) {
  const repo = tmpGitRepo()
  const env: NodeJS.ProcessEnv = {
    ...repo.env,
    PATH: `${bin}${delimiter}${repo.env.PATH ?? ''}`,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-ant-scripted-test-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // As root, claude runs autonomous only in a sandbox it is told about.
    IS_SANDBOX: '1',
  }
  const harness = (args: string[]) => cli(args, { cwd: repo.dir, env, timeoutMs: 150_000, process: true })
  return { repo, env, harness }
}

const servers: ScriptedServer[] = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

async function run(level: string, tool: (cwd: string) => { name: string; input: Record<string, unknown> }) {
  const model = await server(tool)
  servers.push(model)
  const { repo, harness } = setup(model)
  const result = await harness(['run', '-a', 'claude', '-P', level, '--json', 'make the change'])
  return { model, repo, harness, result, record: json<Rec>(result) }
}

const write = (cwd: string) => ({
  name: 'Write',
  input: { file_path: join(cwd, 'made-by-agent.txt'), content: 'hello\n' },
})
// Not `touch`: claude's acceptEdits lets plain file-system commands (touch, mkdir) run in the working folder.
const command = () => ({
  name: 'Bash',
  input: { command: `node -e "require('fs').writeFileSync('ran-a-command', '')"`, description: 'run node' },
})

describe('claude, the real CLI, headless', () => {
  test('supervised: the Write lands in the worktree (never the checkout); the exact resume; usage as reported', async (ctx) => {
    if (!bin) return ctx.skip()
    const { model, repo, harness, result, record } = await run('supervised', write)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(record.status).toBe('COMPLETED')
    expect(readFileSync(join(record.worktree_dir, 'made-by-agent.txt'), 'utf8')).toBe('hello\n')
    expect(existsSync(join(repo.dir, 'made-by-agent.txt'))).toBe(false)
    expect(record.files_modified).toEqual(['made-by-agent.txt'])
    // Two answers (the tool call, the final text), each reporting USAGE.
    const first = model.requests.length
    expect(first).toBeGreaterThanOrEqual(2)
    expect(record.runs[0]?.usage).toMatchObject({
      input_tokens: USAGE.input * first,
      output_tokens: USAGE.output * first,
    })

    const resume = await harness(['session', 'resume', record.id, '--json', 'and now the second part'])
    expect(resume.exitCode, resume.stderr).toBe(0)
    const second = model.requests[first]
    // The resumed conversation is this session's own: the first prompt and the tool's result are in it.
    expect(second?.text).toContain('make the change')
    expect(second?.text).toContain('made-by-agent.txt')
    expect(second?.text).toContain('and now the second part')
  })

  test('supervised: a command that needs approval is refused (nobody can answer)', async (ctx) => {
    if (!bin) return ctx.skip()
    const { record, result } = await run('supervised', command)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, 'ran-a-command'))).toBe(false)
  })

  test('readonly: the Write is refused, nothing changes', async (ctx) => {
    if (!bin) return ctx.skip()
    const { record, result } = await run('readonly', write)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, 'made-by-agent.txt'))).toBe(false)
    expect(record.files_modified ?? []).toEqual([])
  })

  test('autonomous: the command runs without asking, in the worktree', async (ctx) => {
    if (!bin) return ctx.skip()
    const { record, repo, result } = await run('autonomous', command)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, 'ran-a-command'))).toBe(true)
    expect(existsSync(join(repo.dir, 'ran-a-command'))).toBe(false)
  })
})
