import { describe, expect } from 'vitest'
import {
  CHANGING_COMMAND,
  cliTest,
  expectCommandRanInWorktree,
  expectSupervisedWrite,
  expectUsageOf,
  expectWriteRefused,
  FILE,
  recordOf,
  resumeOwnConversation,
  runAt,
  scriptedProjects,
  show,
  useInstalledClis,
} from './drive.js'
import { openaiChatServer, openaiHasToolResult, type ToolCall, USAGE } from './model-server.js'

/**
 * pi (the real CLI from npm) through harness, headless, against a scripted OpenAI chat completions server on
 * loopback (a provider in `~/.pi/agent/models.json`, chosen in its settings.json): what each level lets its tool
 * call do, the exact resume by the session file harness owns, and the usage and cost harness records.
 */
useInstalledClis('pi')

/** Per million tokens: pi prices the usage itself from the model's `cost`, and reports it. */
const PRICE = { input: 1, output: 2 }
const COST_PER_ANSWER = (USAGE.input * PRICE.input + USAGE.output * PRICE.output) / 1e6

/** pi 0.73's own switch for its startup network operations (the version check, install telemetry). */
const PI_ENV = { PI_OFFLINE: '1', PI_TELEMETRY: '0' }

function piFiles(url: string): Record<string, string> {
  const models = {
    providers: {
      scripted: {
        baseUrl: `${url}/v1`,
        api: 'openai-completions',
        apiKey: 'scripted-test-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [
          {
            id: 'scripted',
            reasoning: false,
            input: ['text'],
            contextWindow: 128000,
            maxTokens: 4096,
            cost: { ...PRICE, cacheRead: 0, cacheWrite: 0 },
          },
        ],
      },
    },
  }
  return {
    '.pi/agent/models.json': JSON.stringify(models),
    '.pi/agent/settings.json': JSON.stringify({ defaultProvider: 'scripted', defaultModel: 'scripted' }),
  }
}

const scripted = scriptedProjects((url) => ({ env: PI_ENV, files: piFiles(url) }))

/** A server whose first answer is `call`, then a final text. */
const server = (call: ToolCall) => openaiChatServer((request) => (openaiHasToolResult(request) ? null : call))

async function run(level: string, call: ToolCall, prompt?: string) {
  return runAt(await scripted(server(call)), 'pi-agent', level, prompt)
}

// A relative path: it lands where pi works, which must be the worktree.
const write: ToolCall = { name: 'write', input: { path: FILE, content: 'hello\n' } }
const command: ToolCall = { name: 'bash', input: { command: CHANGING_COMMAND } }

describe('pi, the real CLI, headless', () => {
  cliTest(
    'supervised: the write lands in the worktree (never the checkout); resume by its session file; usage and cost as reported',
    async () => {
      const outcome = await run('supervised', write)
      const first = expectSupervisedWrite(outcome)
      const { model, harness, record } = outcome
      expect(record.runs[0]?.usage?.cost_usd).toBeCloseTo(COST_PER_ANSWER * first, 9)
      expect(record.cost?.estimated_cost_usd).toBeCloseTo(COST_PER_ANSWER * first, 9)

      const resume = await resumeOwnConversation(harness, record.id, () => model.requests[first])
      expectUsageOf(resume.record.runs[1]?.usage, model.requests.length - first)
    },
    480_000,
  )

  cliTest('readonly, detached: pi has no write tool, nothing changes', async () => {
    const { model, harness } = await scripted(server(write))
    const started = await recordOf(harness, [
      'run',
      '-a',
      'pi-agent',
      '-P',
      'readonly',
      '--detach',
      'look only',
    ])
    expect(started.result.exitCode, started.result.stderr).toBe(0)
    const wait = await harness(['session', 'wait', started.record.id, '--timeout', '300s'])
    expect(wait.exitCode, wait.stderr).toBe(0)
    const record = await show(harness, started.record.id)
    expect(record.status).toBe('COMPLETED')
    // The tools pi offered the model: read-only ones alone.
    const tools = ((model.requests[0]?.body.tools ?? []) as { function?: { name?: string } }[]).map(
      (t) => t.function?.name,
    )
    expect(tools.sort()).toEqual(['find', 'grep', 'ls', 'read'])
    expectWriteRefused({ result: started.result, record })
    expect(record.runs[0]?.usage).toMatchObject({ input_tokens: USAGE.input * model.requests.length })
  })

  cliTest(
    'autonomous: the command runs, in the worktree; a prompt beginning with "-" reaches pi as the prompt',
    async () => {
      const outcome = await run('autonomous', command, '--prompt=-v crashes')
      expectCommandRanInWorktree(outcome)
      expect(outcome.model.requests[0]?.text).toContain('-v crashes')
    },
  )
})
