import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type CliResult, cli, json } from '../helpers/cli.js'
import { runsWith } from '../helpers/require.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'
import { installClis } from './install.js'
import { type RecordedRequest, type ScriptedServer, type ToolCall, USAGE } from './model-server.js'

/**
 * What the real-CLI files share: the install (skipped visibly when npm cannot install), a project whose HOME
 * and XDG folders are its own (nothing outside the test is read or written), harness runs in it, and the
 * checks every CLI's file makes of a run's outcome. A file keeps what is its CLI's own: its configuration,
 * its tools' names, what it does differently.
 */
export type Run = {
  n: number
  usage?: { input_tokens?: number | null; output_tokens?: number | null; cost_usd?: number | null } | null
}
export type Rec = Record<string, unknown> & {
  id: string
  status: string
  state?: string
  worktree_dir: string
  agent_session_id?: string | null
  runs: Run[]
  files_modified?: string[]
  cost?: { total_tokens: number | null; estimated_cost_usd: number | null } | null
}

export const FILE = 'made-by-agent.txt'
const COMMAND_FILE = 'ran-a-command'
/** A changing command that no CLI's "safe command" list lets through (not `touch`, not `mkdir`). */
export const CHANGING_COMMAND = `node -e "require('fs').writeFileSync('${COMMAND_FILE}', '')"`
export const FIRST_PROMPT = 'make the change'
const SECOND_PROMPT = 'and now the second part'

/** The installed CLIs' bin folder once `beforeAll` ran; undefined when npm could not install them. */
const installed: { bin?: string } = {}

/** Installs the CLIs once per file; says so, once, when they could not be. */
export function useInstalledClis(name: string): void {
  beforeAll(async () => {
    const result = await installClis()
    installed.bin = result.bin
    // Required (CI: HARNESS_REQUIRE_REAL_CLIS=1), a failed install fails the file instead of skipping it.
    if (result.reason) runsWith('real-clis', `real ${name}`, result.reason)
  }, 600_000)
}

/**
 * A test that needs the installed CLIs (`body` gets their bin folder): skipped where npm could not install
 * them (useInstalledClis says why).
 */
export function cliTest(title: string, body: (bin: string) => Promise<void>, timeoutMs?: number): void {
  test(
    title,
    async (ctx) => {
      if (!installed.bin) return ctx.skip()
      await body(installed.bin)
    },
    timeoutMs,
  )
}

export interface Project {
  repo: TmpRepo
  env: NodeJS.ProcessEnv
  harness(args: string[]): Promise<CliResult>
}

/**
 * A fresh repository with its own HOME, XDG folders and `CODEX_HOME`; `files` (paths under HOME) are written
 * first: the CLI's configuration pointing it at the scripted server.
 */
function project(
  extraEnv: NodeJS.ProcessEnv | ((home: string) => NodeJS.ProcessEnv),
  files: Record<string, string> = {},
): Project {
  const repo = tmpGitRepo()
  const home = repo.home
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(home, path)), { recursive: true })
    writeFileSync(join(home, path), content)
  }
  const env: NodeJS.ProcessEnv = {
    ...repo.env,
    PATH: `${installed.bin}${delimiter}${repo.env.PATH ?? ''}`,
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    CODEX_HOME: join(home, '.codex'),
    ...(typeof extraEnv === 'function' ? extraEnv(home) : extraEnv),
  }
  const harness = (args: string[]) => cli(args, { cwd: repo.dir, env, timeoutMs: 420_000, process: true })
  return { repo, env, harness }
}

/** How a CLI is pointed at a scripted server at `url`: its environment (the fake key) and files under HOME. */
export type Configure = (url: string) => {
  env: NodeJS.ProcessEnv | ((home: string) => NodeJS.ProcessEnv)
  files?: Record<string, string>
}

export interface ScriptedProject extends Project {
  model: ScriptedServer
}

/**
 * Per file: a project for each scripted server handed to the function returned, its CLI pointed at that
 * server by `configure`; the servers are closed after the file's tests.
 */
export function scriptedProjects(
  configure: Configure,
): (server: Promise<ScriptedServer>) => Promise<ScriptedProject> {
  const servers: ScriptedServer[] = []
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()))
  })
  return async (server) => {
    const model = await server
    servers.push(model)
    const { env, files } = configure(model.url)
    return { model, ...project(env, files) }
  }
}

/** `harness run -a <agent> -P <level> <prompt> --json` in `made`, and what it made. */
export async function runAt(made: ScriptedProject, agent: string, level: string, prompt = FIRST_PROMPT) {
  return { ...made, ...(await recordOf(made.harness, ['run', '-a', agent, '-P', level, prompt])) }
}

/** `harness <args> --json`, its record parsed. */
export async function recordOf(
  harness: Project['harness'],
  args: string[],
): Promise<{ result: CliResult; record: Rec }> {
  const result = await harness([...args, '--json'])
  return { result, record: json<Rec>(result) }
}

/** The record as `session show --json` prints it now (after a detached run ended). */
export async function show(harness: Project['harness'], id: string): Promise<Rec> {
  return json<Rec>(await harness(['session', 'show', id, '--json']))
}

/** A run's outcome in its project: what the checks below read. */
export interface Outcome {
  repo: TmpRepo
  result: CliResult
  record: Rec
}

/** The run completed and its write of FILE landed in the worktree, never in the checkout. */
export function expectWroteInWorktree({ repo, result, record }: Outcome): void {
  expect(result.exitCode, result.stderr).toBe(0)
  expect(record.status).toBe('COMPLETED')
  expect(readFileSync(join(record.worktree_dir, FILE), 'utf8')).toBe('hello\n')
  expect(existsSync(join(repo.dir, FILE))).toBe(false)
  expect(record.files_modified).toEqual([FILE])
}

/**
 * A supervised run's write of FILE landed in the worktree, and its usage is the scripted server's for each
 * request it made (`atLeast` of them: the tool call and the final text); says how many it made.
 */
export function expectSupervisedWrite(
  outcome: Outcome & { model: { requests: unknown[] } },
  atLeast = 2,
  exactly = true,
): number {
  expectWroteInWorktree(outcome)
  const first = outcome.model.requests.length
  if (exactly) expect(first).toBe(atLeast)
  else expect(first).toBeGreaterThanOrEqual(atLeast)
  expectUsageOf(outcome.record.runs[0]?.usage, first)
  return first
}

/** The run ended well but its write of FILE was refused: nothing changed. */
export function expectWriteRefused({ result, record }: Omit<Outcome, 'repo'>): void {
  expect(result.exitCode, result.stderr).toBe(0)
  expect(existsSync(join(record.worktree_dir, FILE))).toBe(false)
  expect(record.files_modified ?? []).toEqual([])
}

/** The run ended well and CHANGING_COMMAND ran, in the worktree (never the checkout). */
export function expectCommandRanInWorktree({ repo, result, record }: Outcome): void {
  expect(result.exitCode, result.stderr).toBe(0)
  expect(existsSync(join(record.worktree_dir, COMMAND_FILE))).toBe(true)
  expect(existsSync(join(repo.dir, COMMAND_FILE))).toBe(false)
}

/** The run ended well but CHANGING_COMMAND was refused (nobody could approve it). */
export function expectCommandRefused({ result, record }: Omit<Outcome, 'repo'>): void {
  expect(result.exitCode, result.stderr).toBe(0)
  expect(existsSync(join(record.worktree_dir, COMMAND_FILE))).toBe(false)
}

/** A run's usage is what the scripted server reported: USAGE for each of its `answers`. */
export function expectUsageOf(usage: Run['usage'], answers: number): void {
  expect(usage).toMatchObject({ input_tokens: USAGE.input * answers, output_tokens: USAGE.output * answers })
}

/**
 * `session resume <id> SECOND_PROMPT`, which must end well; `firstOfResume` picks the request that opened the
 * resumed run. The resumed conversation is the session's own: the first prompt and what the tool did with FILE
 * (its call, or the command's output) are in it.
 */
export async function resumeOwnConversation(
  harness: Project['harness'],
  id: string,
  firstOfResume: () => RecordedRequest | undefined,
): Promise<{ result: CliResult; record: Rec }> {
  const resume = await recordOf(harness, ['session', 'resume', id, SECOND_PROMPT])
  expect(resume.result.exitCode, resume.result.stderr).toBe(0)
  const text = firstOfResume()?.text
  expect(text).toContain(FIRST_PROMPT)
  expect(text).toContain(FILE)
  expect(text).toContain(SECOND_PROMPT)
  return resume
}

// claude's, shared by its headless and interactive files.

/** The worktree claude was started in, as its system prompt tells the model. */
export function claudeWorkingDirectory(request: RecordedRequest): string {
  // claude 2.1.332: " - Primary working directory: <dir>" in its system prompt.
  const match = /working directory: ([^\s"\\]+)/i.exec(request.text)
  return match?.[1] ?? '/nonexistent'
}

/** claude's Write of FILE into the folder it works in. */
export function claudeWrite(cwd: string): ToolCall {
  return { name: 'Write', input: { file_path: join(cwd, FILE), content: 'hello\n' } }
}

/** claude's environment against a scripted Anthropic server at `url`, with `key` as its API key. */
export function claudeEnv(url: string, key: string): NodeJS.ProcessEnv {
  return {
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // As root, claude runs autonomous only in a sandbox it is told about.
    IS_SANDBOX: '1',
  }
}
