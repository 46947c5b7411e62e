import { describe } from 'vitest'
import {
  CHANGING_COMMAND,
  cliTest,
  expectCommandRanInWorktree,
  expectCommandRefused,
  expectSupervisedWrite,
  expectWriteRefused,
  FILE,
  resumeOwnConversation,
  runAt,
  scriptedProjects,
  useInstalledClis,
} from './drive.js'
import { geminiHasToolResult, geminiServer, type ToolCall } from './model-server.js'

/**
 * gemini (the real CLI from npm) through harness, headless, against a scripted Gemini API server on loopback
 * (its API-key path: `GEMINI_API_KEY`, the key chosen in its settings.json, and `GOOGLE_GEMINI_BASE_URL`, which
 * gemini-cli 0.61 honours): what each level lets its tool call do, the exact resume by `--session-id` /
 * `--resume <uuid>`, and the usage harness records.
 */
useInstalledClis('gemini')
const SETTINGS = JSON.stringify({
  security: { auth: { selectedType: 'gemini-api-key' } },
  telemetry: { enabled: false },
  privacy: { usageStatisticsEnabled: false },
  // No update check against the package registry on start: a run waits for nothing but the scripted server.
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
})

const scripted = scriptedProjects((url) => ({
  env: { GEMINI_API_KEY: 'scripted-test-key', GOOGLE_GEMINI_BASE_URL: url },
  files: { '.gemini/settings.json': SETTINGS },
}))

async function run(level: string, tool: ToolCall) {
  const model = geminiServer((request) => (geminiHasToolResult(request) ? null : tool))
  return runAt(await scripted(model), 'gemini', level)
}

// A relative path: gemini resolves it against its workspace, which must be the worktree.
const write: ToolCall = { name: 'write_file', input: { file_path: FILE, content: 'hello\n' } }
const command: ToolCall = { name: 'run_shell_command', input: { command: CHANGING_COMMAND } }

describe('gemini, the real CLI, headless', () => {
  cliTest(
    'supervised: the write lands in the worktree (never the checkout); resume by its uuid; usage as reported',
    async () => {
      const outcome = await run('supervised', write)
      const first = expectSupervisedWrite(outcome)
      const { model, harness, record } = outcome
      await resumeOwnConversation(harness, record.id, () => model.requests[first])
    },
    480_000,
  )

  cliTest('supervised: a command is refused (nobody can answer)', async () => {
    expectCommandRefused(await run('supervised', command))
  })

  cliTest('readonly: the write is refused, nothing changes', async () => {
    expectWriteRefused(await run('readonly', write))
  })

  cliTest('autonomous: the command runs, in the worktree', async () => {
    expectCommandRanInWorktree(await run('autonomous', command))
  })
})
