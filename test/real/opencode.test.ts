import { join } from 'node:path'
import { describe, expect } from 'vitest'
import {
  CHANGING_COMMAND,
  cliTest,
  expectCommandRanInWorktree,
  expectUsageOf,
  expectWriteRefused,
  expectWroteInWorktree,
  FILE,
  FIRST_PROMPT,
  recordOf,
  resumeOwnConversation,
  scriptedProjects,
  useInstalledClis,
} from './drive.js'
import { openaiChatServer, openaiHasToolResult, type RecordedRequest, type ToolCall } from './model-server.js'

/**
 * opencode (the real CLI from npm) through harness, headless, against a scripted OpenAI chat completions server
 * on loopback (an `@ai-sdk/openai-compatible` provider in the file `OPENCODE_CONFIG` names): what each level lets
 * its tool call do, the exact resume by the captured `sessionID`, and the usage harness records.
 */
useInstalledClis('opencode')
function opencodeConfig(url: string): string {
  return JSON.stringify({
    model: 'scripted/scripted',
    autoupdate: false,
    share: 'disabled',
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'scripted',
        options: { baseURL: `${url}/v1`, apiKey: 'scripted-test-key' },
        models: { scripted: { name: 'scripted', tool_call: true, limit: { context: 128000, output: 4096 } } },
      },
    },
  })
}

/** The folder opencode works in, as its system prompt tells the model. */
function workingDirectory(request: RecordedRequest): string {
  // opencode 1.18.33: "Working directory: <dir>" in its environment block.
  const match = /Working directory: ([^\s"\\<]+)/i.exec(request.text)
  return match?.[1] ?? '/nonexistent'
}

/** A turn of the agent's conversation; opencode's other requests (the session's title) offer no tools. */
function isTurn(request: RecordedRequest): boolean {
  return Array.isArray(request.body.tools) && request.body.tools.length > 0
}

const turns = (requests: RecordedRequest[]) => requests.filter(isTurn)

const CONFIG = join('.config', 'opencode-test', 'opencode.json')
const scripted = scriptedProjects((url) => ({
  env: (home) => ({
    OPENCODE_CONFIG: join(home, CONFIG),
    // What opencode 1.18.33 does on every start that only slows a run against a loopback server: fetch the
    // models list, check for updates, install its default plugins, read claude's and others' skills, watch
    // files. Measured on 2 loaded cores: the first request 15 s after the start with the first two only, 9 s
    // with all.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
    OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER: '1',
  }),
  files: { [CONFIG]: opencodeConfig(url) },
}))

/** A project whose opencode talks to a server that makes `tool` once, then answers with a text. */
function scriptedProject(tool: (cwd: string) => ToolCall) {
  return scripted(
    openaiChatServer((request) =>
      !isTurn(request) || openaiHasToolResult(request) ? null : tool(workingDirectory(request)),
    ),
  )
}

const write = (cwd: string): ToolCall => ({
  name: 'write',
  input: { filePath: join(cwd, FILE), content: 'hello\n' },
})
const command = (): ToolCall => ({
  name: 'bash',
  input: { command: CHANGING_COMMAND, description: 'run node' },
})

describe('opencode, the real CLI, headless', () => {
  cliTest(
    'supervised: the write lands in the worktree (never the checkout); resume by sessionID; usage as reported',
    async () => {
      const { model, repo, harness } = await scriptedProject(write)
      const { result, record } = await recordOf(harness, ['run', '-a', 'opencode', FIRST_PROMPT])
      expectWroteInWorktree({ repo, result, record })
      // opencode works in the worktree: harness gives it the worktree as PWD, which `opencode run` reads.
      expect(workingDirectory(turns(model.requests)[0] as RecordedRequest)).toBe(record.worktree_dir)
      expect(record.agent_session_id).toMatch(/^ses_/)
      const first = turns(model.requests).length
      expect(first).toBeGreaterThanOrEqual(2)
      expectUsageOf(record.runs[0]?.usage, first)

      const resume = await resumeOwnConversation(harness, record.id, () => turns(model.requests)[first])
      expectUsageOf(resume.record.runs[1]?.usage, turns(model.requests).length - first)
    },
    480_000,
  )

  cliTest('readonly (the plan agent): the write is refused, nothing changes', async () => {
    const { harness } = await scriptedProject(write)
    expectWriteRefused(await recordOf(harness, ['run', '-a', 'opencode', '-P', 'readonly', 'make it']))
  })

  cliTest('autonomous: the command runs, in the worktree', async () => {
    const { repo, harness } = await scriptedProject(command)
    const run = await recordOf(harness, ['run', '-a', 'opencode', '-P', 'autonomous', 'run it'])
    expectCommandRanInWorktree({ repo, ...run })
  })
})
