import { describe } from 'vitest'
import {
  CHANGING_COMMAND,
  claudeEnv,
  claudeWorkingDirectory,
  claudeWrite,
  cliTest,
  expectCommandRanInWorktree,
  expectCommandRefused,
  expectSupervisedWrite,
  expectWriteRefused,
  resumeOwnConversation,
  runAt,
  scriptedProjects,
  useInstalledClis,
} from './drive.js'
import { anthropicHasToolResult, anthropicServer, type ToolCall } from './model-server.js'

/**
 * claude (the real CLI from npm) through harness, headless, against a scripted Anthropic Messages server on
 * loopback: what each level lets its tool call do, the exact resume, and the usage harness records.
 */
useInstalledClis('claude')
const scripted = scriptedProjects((url) => ({ env: claudeEnv(url, 'sk-ant-scripted-test-key') }))

/** A server whose first answer is one tool call, then a final text; `tool` makes the call from the request. */
async function run(level: string, tool: (cwd: string) => ToolCall) {
  const model = anthropicServer((request) =>
    anthropicHasToolResult(request) ? null : tool(claudeWorkingDirectory(request)),
  )
  return runAt(await scripted(model), 'claude', level)
}

// Not `touch`: claude's acceptEdits lets plain file-system commands (touch, mkdir) run in the working folder.
const command = (): ToolCall => ({
  name: 'Bash',
  input: { command: CHANGING_COMMAND, description: 'run node' },
})

describe('claude, the real CLI, headless', () => {
  cliTest(
    'supervised: the Write lands in the worktree (never the checkout); the exact resume; usage as reported',
    async () => {
      const outcome = await run('supervised', claudeWrite)
      // Two answers or more (the tool call, the final text), each reporting USAGE.
      const first = expectSupervisedWrite(outcome, 2, false)
      const { model, harness, record } = outcome
      await resumeOwnConversation(harness, record.id, () => model.requests[first])
    },
  )

  cliTest('supervised: a command that needs approval is refused (nobody can answer)', async () => {
    expectCommandRefused(await run('supervised', command))
  })

  cliTest('readonly: the Write is refused, nothing changes', async () => {
    expectWriteRefused(await run('readonly', claudeWrite))
  })

  cliTest('autonomous: the command runs without asking, in the worktree', async () => {
    expectCommandRanInWorktree(await run('autonomous', command))
  })
})
