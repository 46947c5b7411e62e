import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  CHANGING_COMMAND,
  COMMAND_FILE,
  FILE,
  installed,
  project,
  recordOf,
  serversOfFile,
  useInstalledClis,
} from './drive.js'
import { openaiResponsesServer, responsesHasToolResult, type ScriptedServer, USAGE } from './model-server.js'

/**
 * codex (the real CLI from npm) through harness, headless, against a scripted Responses API server on loopback
 * (codex 0.171 speaks only the Responses API to a model provider): what each level lets its command do, the
 * exact resume by the captured `thread_id`, and the usage harness records.
 */
useInstalledClis('codex')
const servers = serversOfFile()

/** codex's config: a model provider whose base_url is the scripted server, its key from the environment. */
function codexConfig(url: string): string {
  return `model = "scripted"
model_provider = "scripted"
[model_providers.scripted]
name = "scripted"
base_url = "${url}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`
}

async function run(level: string, cmd: string) {
  const model = await openaiResponsesServer((request) =>
    responsesHasToolResult(request) ? null : { name: 'exec_command', input: { cmd } },
  )
  servers.push(model)
  const { repo, harness } = project(
    { SCRIPTED_API_KEY: 'scripted-test-key' },
    { '.codex/config.toml': codexConfig(model.url) },
  )
  const { result, record } = await recordOf(harness, ['run', '-a', 'codex', '-P', level, 'make the change'])
  return { model, repo, harness, result, record }
}

const writeFile = `printf 'hello\\n' > ${FILE}`

function expectUsage(model: ScriptedServer, usage: unknown, from: number, to: number) {
  const answers = to - from
  expect(answers).toBeGreaterThanOrEqual(2)
  expect(usage).toMatchObject({ input_tokens: USAGE.input * answers, output_tokens: USAGE.output * answers })
  expect(model.requests.length).toBe(to)
}

describe('codex, the real CLI, headless', () => {
  test('supervised: the command writes in the worktree (never the checkout); resume by thread_id; usage as codex reports it', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { model, repo, harness, result, record } = await run('supervised', writeFile)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(record.status).toBe('COMPLETED')
    expect(readFileSync(join(record.worktree_dir, FILE), 'utf8')).toBe('hello\n')
    expect(existsSync(join(repo.dir, FILE))).toBe(false)
    expect(record.files_modified).toEqual([FILE])
    expect(record.agent_session_id).toMatch(/^[0-9a-f-]{36}$/)
    const first = model.requests.length
    expectUsage(model, record.runs[0]?.usage, 0, first)

    const resume = await recordOf(harness, ['session', 'resume', record.id, 'and now the second part'])
    expect(resume.result.exitCode, resume.result.stderr).toBe(0)
    const second = model.requests[first]
    // The resumed conversation is this session's own: the first prompt and the command's output are in it.
    expect(second?.text).toContain('make the change')
    expect(second?.text).toContain(FILE)
    expect(second?.text).toContain('and now the second part')
    // codex 0.171's `turn.completed` on a resumed thread reports the thread's total, the first run's tokens
    // included: harness records the resumed run's own, what the server answered in it.
    expectUsage(model, resume.record.runs[1]?.usage, first, model.requests.length)
    expect(resume.record.cost?.total_tokens).toBe((USAGE.input + USAGE.output) * model.requests.length)
  }, 480_000)

  test('readonly: the sandbox refuses the write, nothing changes', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { record, result } = await run('readonly', writeFile)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, FILE))).toBe(false)
    expect(record.files_modified ?? []).toEqual([])
  })

  test('autonomous: the command runs, in the worktree', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { record, repo, result } = await run('autonomous', CHANGING_COMMAND)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, COMMAND_FILE))).toBe(true)
    expect(existsSync(join(repo.dir, COMMAND_FILE))).toBe(false)
  })
})
