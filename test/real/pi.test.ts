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
const servers = serversOfFile()

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

async function run(level: string, call: ToolCall, prompt = 'make the change') {
  const model = await openaiChatServer((request) => (openaiHasToolResult(request) ? null : call))
  servers.push(model)
  const { repo, harness } = project(PI_ENV, piFiles(model.url))
  const { result, record } = await recordOf(harness, ['run', '-a', 'pi-agent', '-P', level, prompt])
  return { model, repo, harness, result, record }
}

// A relative path: it lands where pi works, which must be the worktree.
const write: ToolCall = { name: 'write', input: { path: FILE, content: 'hello\n' } }
const command: ToolCall = { name: 'bash', input: { command: CHANGING_COMMAND } }

describe('pi, the real CLI, headless', () => {
  test('supervised: the write lands in the worktree (never the checkout); resume by its session file; usage and cost as reported', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { model, repo, harness, result, record } = await run('supervised', write)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(record.status).toBe('COMPLETED')
    expect(readFileSync(join(record.worktree_dir, FILE), 'utf8')).toBe('hello\n')
    expect(existsSync(join(repo.dir, FILE))).toBe(false)
    expect(record.files_modified).toEqual([FILE])
    const first = model.requests.length
    expect(first).toBe(2)
    expect(record.runs[0]?.usage).toMatchObject({
      input_tokens: USAGE.input * first,
      output_tokens: USAGE.output * first,
    })
    expect(record.runs[0]?.usage?.cost_usd).toBeCloseTo(COST_PER_ANSWER * first, 9)
    expect(record.cost?.estimated_cost_usd).toBeCloseTo(COST_PER_ANSWER * first, 9)

    const resume = await recordOf(harness, ['session', 'resume', record.id, 'and now the second part'])
    expect(resume.result.exitCode, resume.result.stderr).toBe(0)
    const second = model.requests[first]
    expect(second?.text).toContain('make the change')
    expect(second?.text).toContain(FILE)
    expect(second?.text).toContain('and now the second part')
    const answers = model.requests.length - first
    expect(resume.record.runs[1]?.usage).toMatchObject({
      input_tokens: USAGE.input * answers,
      output_tokens: USAGE.output * answers,
    })
  }, 480_000)

  test('readonly, detached: pi has no write tool, nothing changes', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const model = await openaiChatServer((request) => (openaiHasToolResult(request) ? null : write))
    servers.push(model)
    const { harness } = project(PI_ENV, piFiles(model.url))
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
    expect(existsSync(join(record.worktree_dir, FILE))).toBe(false)
    expect(record.files_modified ?? []).toEqual([])
    expect(record.runs[0]?.usage).toMatchObject({ input_tokens: USAGE.input * model.requests.length })
  })

  test('autonomous: the command runs, in the worktree; a prompt beginning with "-" reaches pi as the prompt', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { model, record, repo, result } = await run('autonomous', command, '--prompt=-v crashes')
    expect(result.exitCode, result.stderr).toBe(0)
    expect(model.requests[0]?.text).toContain('-v crashes')
    expect(existsSync(join(record.worktree_dir, COMMAND_FILE))).toBe(true)
    expect(existsSync(join(repo.dir, COMMAND_FILE))).toBe(false)
  })
})
