import { execFile } from 'node:child_process'
import { BACKEND_NAMES } from './backend-names.js'
import { DEFAULT_AGENT, type HarnessConfig, loadConfig, readConfigFile, userConfigFile } from './config.js'
import { assertUsableDir, readDirEntries, statPath } from './disk/door.js'
import { HarnessError, shellWord } from './errors.js'
import { gitVersion } from './git/version.js'
import { assertExecutable } from './process/supervisor.js'
import type { ProjectPaths } from './project.js'
import { listProviders, resolveProvider } from './providers/args.js'
import { flagsMissingFromHelp } from './providers/help.js'
import { backendNamed } from './sessions/backends/index.js'
import { readEnvOf } from './sessions/backends/read-env.js'
import type { SessionEnv } from './sessions/ports.js'
import { seen } from './sessions/query/query.js'
import { backendStates } from './sessions/query/reconcile.js'
import { isTrusted } from './trust.js'

/** One line of `harness doctor`: `fail` makes harness unusable here; `warn` is worth a look. */
export interface DoctorCheck {
  name: string
  status: 'ok' | 'warn' | 'fail' | 'info'
  detail: string
  hint?: string
}

export interface DoctorReport {
  usable: boolean
  checks: DoctorCheck[]
}

const PROBE_TIMEOUT_MS = 5000
/**
 * The ceiling of each agent CLI's `--version` and `--help`: they run side by side, and a node CLI that takes
 * 2 s alone (gemini-cli 0.61) took over 5 s beside the others on a busy 2-core machine, so 5 s reported its
 * version "unknown". Each probe has its own ceiling; none is cut short for another's sake.
 */
const AGENT_PROBE_TIMEOUT_MS = 30_000

/** Runs a tool briefly (`tmux -V`, `claude --help`): its output, or null when it cannot run. */
function probe(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeout = PROBE_TIMEOUT_MS,
): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env, cwd, timeout, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = (error as NodeJS.ErrnoException | null)?.code
        resolve(code === 'ENOENT' || code === 'EACCES' ? null : `${stdout}${stderr}`)
      },
    ).stdin?.end()
  })
}

const firstLine = (text: string) => text.trim().split('\n')[0]?.trim() ?? ''

/**
 * `harness doctor`: what harness needs here (git, a usable .harness, trusted config, the agents) and what is
 * worth a look (stale or foreign sessions, agent CLIs whose flags changed). Usable means no `fail` line.
 */
export async function runDoctor(
  ctx: SessionEnv,
  options: { submitTest: boolean } = { submitTest: false },
): Promise<DoctorReport> {
  const env = ctx.env
  const git = await gitVersion(ctx.cwd, env)
  const checks: DoctorCheck[] = [
    git === null
      ? { name: 'git', status: 'fail', detail: 'not installed or not on PATH', hint: 'install git' }
      : { name: 'git', status: 'ok', detail: git },
  ]
  const paths = await ctx.project()
  const harness = harnessCheck(paths)
  checks.push(harness)
  const config = await configChecks(paths, env, checks)
  checks.push(...(await agentChecks(ctx, config)))
  const tmux = await probe('tmux', ['-V'], env, ctx.cwd)
  checks.push(
    tmux === null
      ? {
          name: 'tmux',
          status: 'info',
          detail: 'not installed (needed only for interactive runs in the background)',
        }
      : { name: 'tmux', status: 'ok', detail: firstLine(tmux) },
  )
  checks.push(...(await backendChecks(config, env, options.submitTest)))
  if (paths.exists && harness.status !== 'fail') checks.push(...(await sessionChecks(ctx)))
  return { usable: !checks.some((c) => c.status === 'fail'), checks }
}

/** The `.harness` folder: there (or made by the first run), a folder harness can use, private to the user. */
function harnessCheck(paths: ProjectPaths): DoctorCheck {
  if (!paths.exists)
    return { name: '.harness', status: 'info', detail: `${paths.harnessDir} (made by the first run)` }
  try {
    const mode = statPath(paths.harnessDir).mode & 0o777
    assertUsableDir(paths.harnessDir)
    readDirEntries(paths.sessionsDir)
    return mode & 0o077
      ? {
          name: '.harness',
          status: 'warn',
          detail: `${paths.harnessDir} is mode ${mode.toString(8)}: others can read prompts and logs`,
          hint: `chmod 700 ${shellWord(paths.harnessDir)}`,
        }
      : { name: '.harness', status: 'ok', detail: `${paths.harnessDir} (mode ${mode.toString(8)})` }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // No sessions folder yet is fine.
    if (code === 'ENOENT') return { name: '.harness', status: 'ok', detail: paths.harnessDir }
    return {
      name: '.harness',
      status: 'fail',
      detail: `${paths.harnessDir} cannot be used: ${code ?? (error as Error).message}`,
      hint: 'it must be a folder (with a sessions folder) that you can read and write',
    }
  }
}

/** The user's and the project's config (pushing what is wrong with them onto `checks`); the config in force. */
async function configChecks(
  paths: ProjectPaths,
  env: NodeJS.ProcessEnv,
  checks: DoctorCheck[],
): Promise<HarnessConfig> {
  let config: HarnessConfig = {}
  try {
    readConfigFile(userConfigFile(env))
  } catch (error) {
    checks.push(configProblem('user config', error))
  }
  let projectConfig = false
  try {
    projectConfig = readConfigFile(paths.configFile) !== null
    if (projectConfig && !isTrusted(paths.root, paths.configFile, env)) {
      checks.push({
        name: 'project config',
        status: 'fail',
        detail: `${paths.configFile} is not trusted: commands that use config refuse it`,
        hint: `review it, then run "harness trust"`,
      })
    } else if (projectConfig) {
      checks.push({ name: 'project config', status: 'ok', detail: `${paths.configFile} (trusted)` })
    }
    config = loadConfig({ projectConfigFile: paths.configFile, env })
  } catch (error) {
    if (!(error instanceof HarnessError && error.code === 'UNTRUSTED_CONFIG')) {
      checks.push(configProblem('project config', error))
    }
    try {
      config = readConfigFile(userConfigFile(env)) ?? {}
    } catch {}
  }
  if (!projectConfig) checks.push({ name: 'project config', status: 'info', detail: 'none' })
  return config
}

/**
 * What each backend says of itself here (docs/backends.md): its engine or cluster, its version, whether a test
 * run starts. One that config sends sessions to (`backend`) fails the doctor when it cannot run them.
 */
async function backendChecks(
  config: HarnessConfig,
  env: NodeJS.ProcessEnv,
  submitTest: boolean,
): Promise<DoctorCheck[]> {
  let agentCommand = config.defaults?.agent ?? DEFAULT_AGENT
  try {
    agentCommand = resolveProvider(agentCommand, config).command ?? agentCommand
  } catch {}
  const checks: DoctorCheck[] = []
  for (const name of BACKEND_NAMES) {
    const backend = await backendNamed(name)
    const chosen = backend.name === (config.backend ?? 'local')
    checks.push(...(await backend.doctor({ config, env, chosen, submitTest, agentCommand })))
  }
  return checks
}

function configProblem(name: string, error: unknown): DoctorCheck {
  return {
    name,
    status: 'fail',
    detail: error instanceof Error ? error.message : String(error),
    hint: error instanceof HarnessError ? error.hint : undefined,
  }
}

async function agentChecks(ctx: SessionEnv, config: HarnessConfig): Promise<DoctorCheck[]> {
  const defaultAgent = config.defaults?.agent ?? DEFAULT_AGENT
  const providers = listProviders(config).filter((p) => p.command)
  return Promise.all(
    providers.map(async (provider): Promise<DoctorCheck> => {
      const name = `agent ${provider.name}`
      const command = provider.command as string
      let path: string
      try {
        path = await assertExecutable(command, ctx.env, ctx.cwd, name)
      } catch {
        return provider.name === defaultAgent
          ? {
              name,
              status: 'fail',
              detail: `"${command}" (the default agent) is not installed or not on PATH`,
              hint: 'install it, or choose another: harness config set defaults.agent <name>',
            }
          : { name, status: 'info', detail: `"${command}" not installed` }
      }
      const version =
        firstLine((await probe(path, ['--version'], ctx.env, ctx.cwd, AGENT_PROBE_TIMEOUT_MS)) ?? '') ||
        'version unknown'
      const help = await Promise.all(
        provider.help_args.map((args) => probe(path, args, ctx.env, ctx.cwd, AGENT_PROBE_TIMEOUT_MS)),
      )
      const missing = flagsMissingFromHelp(provider, help.map((h) => h ?? '').join('\n'))
      return missing.length
        ? {
            name,
            status: 'warn',
            detail: `${path} ${version}: its --help does not mention ${missing.join(', ')}, which harness passes`,
            hint: 'the installed CLI may differ from the one harness knows (docs/providers.md)',
          }
        : { name, status: 'ok', detail: `${path} ${version}` }
    }),
  )
}

async function sessionChecks(ctx: SessionEnv): Promise<DoctorCheck[]> {
  const store = await ctx.store()
  const records = store.list()
  // What each backend says (read only: one query per backend), as `list` would show it.
  const states = await backendStates(
    records.filter((r) => r.status === 'RUNNING'),
    readEnvOf(store, ...seen(ctx)),
  )
  const stale = records.filter((r) => {
    const state = states.get(r)
    return state !== undefined && !(state.kind === 'alive' && state.liveness === 'running')
  })
  const foreign = records.filter((r) => r.sealed === false)
  const checks: DoctorCheck[] = [{ name: 'sessions', status: 'ok', detail: `${records.length} on record` }]
  if (stale.length) {
    checks.push({
      name: 'stale sessions',
      status: 'warn',
      detail: `${stale.length} RUNNING but not verifiably alive: ${stale.map((r) => r.id).join(', ')}`,
      hint: 'harness session recover --scan',
    })
  }
  if (foreign.length) {
    checks.push({
      name: 'foreign sessions',
      status: 'warn',
      detail: `${foreign.length} not sealed by harness for you (shown, never acted on): ${foreign.map((r) => r.id).join(', ')}`,
      hint: 'harness session adopt <id>, for one you know',
    })
  }
  return checks
}
