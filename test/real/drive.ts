import { mkdirSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { type CliResult, cli, json } from '../helpers/cli.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'
import { installClis } from './install.js'
import type { ScriptedServer } from './model-server.js'

/**
 * What the real-CLI files share: the install (skipped visibly when npm cannot install), a project whose HOME
 * and XDG folders are its own (nothing outside the test is read or written), and harness runs in it.
 */
export type Run = {
  n: number
  usage?: { input_tokens?: number | null; output_tokens?: number | null; cost_usd?: number | null } | null
}
export type Rec = Record<string, unknown> & {
  id: string
  status: string
  worktree_dir: string
  agent_session_id?: string | null
  runs: Run[]
  files_modified?: string[]
  cost?: { total_tokens: number | null; estimated_cost_usd: number | null } | null
}

/** The installed CLIs' bin folder once `beforeAll` ran; undefined when npm could not install them. */
export const installed: { bin?: string } = {}

/** Installs the CLIs once per file; says so, once, when they could not be. */
export function useInstalledClis(name: string): void {
  beforeAll(async () => {
    const result = await installClis()
    installed.bin = result.bin
    if (result.reason) console.log(`real ${name}: skipped, ${result.reason}`)
  }, 600_000)
}

/** Closes the file's servers after its tests. */
export function serversOfFile(): ScriptedServer[] {
  const servers: ScriptedServer[] = []
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()))
  })
  return servers
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
export function project(
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

export const FILE = 'made-by-agent.txt'
export const COMMAND_FILE = 'ran-a-command'
/** A changing command that no CLI's "safe command" list lets through (not `touch`, not `mkdir`). */
export const CHANGING_COMMAND = `node -e "require('fs').writeFileSync('${COMMAND_FILE}', '')"`
