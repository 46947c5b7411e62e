import { describe, expect } from 'vitest'
import {
  CHANGING_COMMAND,
  cliTest,
  expectCommandRanInWorktree,
  expectUsageOf,
  expectWriteRefused,
  expectWroteInWorktree,
  FILE,
  type Run,
  resumeOwnConversation,
  runAt,
  scriptedProjects,
  useInstalledClis,
} from './drive.js'
import { openaiResponsesServer, responsesHasToolResult, type ScriptedServer, USAGE } from './model-server.js'

/**
 * codex (the real CLI from npm) through harness, headless, against a scripted Responses API server on loopback
 * (codex 0.171 speaks only the Responses API to a model provider): what each level lets its command do, the
 * exact resume by the captured `thread_id`, and the usage harness records.
 */
useInstalledClis('codex')
const scripted = scriptedProjects((url) => ({
  env: { SCRIPTED_API_KEY: 'scripted-test-key' },
  files: { '.codex/config.toml': codexConfig(url) },
}))

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
  const model = openaiResponsesServer((request) =>
    responsesHasToolResult(request) ? null : { name: 'exec_command', input: { cmd } },
  )
  return runAt(await scripted(model), 'codex', level)
}

const writeFile = `printf 'hello\\n' > ${FILE}`

/** The usage of a run whose answers were the server's requests `from` to `to`: two at least. */
function expectUsage(model: ScriptedServer, usage: Run['usage'], from: number, to: number) {
  expect(to - from).toBeGreaterThanOrEqual(2)
  expectUsageOf(usage, to - from)
  expect(model.requests.length).toBe(to)
}

describe('codex, the real CLI, headless', () => {
  cliTest(
    'supervised: the command writes in the worktree (never the checkout); resume by thread_id; usage as codex reports it',
    async () => {
      const outcome = await run('supervised', writeFile)
      expectWroteInWorktree(outcome)
      const { model, harness, record } = outcome
      expect(record.agent_session_id).toMatch(/^[0-9a-f-]{36}$/)
      const first = model.requests.length
      expectUsage(model, record.runs[0]?.usage, 0, first)

      const resume = await resumeOwnConversation(harness, record.id, () => model.requests[first])
      // codex 0.171's `turn.completed` on a resumed thread reports the thread's total, the first run's tokens
      // included: harness records the resumed run's own, what the server answered in it.
      expectUsage(model, resume.record.runs[1]?.usage, first, model.requests.length)
      expect(resume.record.cost?.total_tokens).toBe((USAGE.input + USAGE.output) * model.requests.length)
    },
    480_000,
  )

  cliTest('readonly: the sandbox refuses the write, nothing changes', async () => {
    expectWriteRefused(await run('readonly', writeFile))
  })

  cliTest('autonomous: the command runs, in the worktree', async () => {
    expectCommandRanInWorktree(await run('autonomous', CHANGING_COMMAND))
  })
})
