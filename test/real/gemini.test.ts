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
import { geminiHasToolResult, geminiServer, type ToolCall, USAGE } from './model-server.js'

/**
 * gemini (the real CLI from npm) through harness, headless, against a scripted Gemini API server on loopback
 * (its API-key path: `GEMINI_API_KEY`, the key chosen in its settings.json, and `GOOGLE_GEMINI_BASE_URL`, which
 * gemini-cli 0.61 honours): what each level lets its tool call do, the exact resume by `--session-id` /
 * `--resume <uuid>`, and the usage harness records.
 */
useInstalledClis('gemini')
const servers = serversOfFile()

const SETTINGS = JSON.stringify({
  security: { auth: { selectedType: 'gemini-api-key' } },
  telemetry: { enabled: false },
  privacy: { usageStatisticsEnabled: false },
  // No update check against the package registry on start: a run waits for nothing but the scripted server.
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
})

async function run(level: string, tool: ToolCall) {
  const model = await geminiServer((request) => (geminiHasToolResult(request) ? null : tool))
  servers.push(model)
  const { repo, harness } = project(
    { GEMINI_API_KEY: 'scripted-test-key', GOOGLE_GEMINI_BASE_URL: model.url },
    { '.gemini/settings.json': SETTINGS },
  )
  const { result, record } = await recordOf(harness, ['run', '-a', 'gemini', '-P', level, 'make the change'])
  return { model, repo, harness, result, record }
}

// A relative path: gemini resolves it against its workspace, which must be the worktree.
const write: ToolCall = { name: 'write_file', input: { file_path: FILE, content: 'hello\n' } }
const command: ToolCall = { name: 'run_shell_command', input: { command: CHANGING_COMMAND } }

describe('gemini, the real CLI, headless', () => {
  test('supervised: the write lands in the worktree (never the checkout); resume by its uuid; usage as reported', async (ctx) => {
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

    const resume = await recordOf(harness, ['session', 'resume', record.id, 'and now the second part'])
    expect(resume.result.exitCode, resume.result.stderr).toBe(0)
    const second = model.requests[first]
    expect(second?.text).toContain('make the change')
    expect(second?.text).toContain(FILE)
    expect(second?.text).toContain('and now the second part')
  }, 480_000)

  test('supervised: a command is refused (nobody can answer)', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { record, result } = await run('supervised', command)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, COMMAND_FILE))).toBe(false)
  })

  test('readonly: the write is refused, nothing changes', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { record, result } = await run('readonly', write)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, FILE))).toBe(false)
    expect(record.files_modified ?? []).toEqual([])
  })

  test('autonomous: the command runs, in the worktree', async (ctx) => {
    if (!installed.bin) return ctx.skip()
    const { record, repo, result } = await run('autonomous', command)
    expect(result.exitCode, result.stderr).toBe(0)
    expect(existsSync(join(record.worktree_dir, COMMAND_FILE))).toBe(true)
    expect(existsSync(join(repo.dir, COMMAND_FILE))).toBe(false)
  })
})
