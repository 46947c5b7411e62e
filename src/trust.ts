import { join } from 'node:path'
import { sha256Hex } from './digest.js'
import { ensureDir, readBytes, readJson, realPath } from './disk/door.js'
import { replaceFileDurably } from './durable.js'
import { ExitCode, HarnessError } from './errors.js'
import { userStateDir } from './project.js'

/**
 * Project config trust (docs/security.md): `.harness/config.json` may come from a clone, so it is used only
 * after `harness trust` stored the project's real path and the file's sha256 in the user's state folder.
 */
interface TrustFile {
  projects: Record<string, { sha256: string; trusted_at: string }>
}

export function trustFilePath(env: NodeJS.ProcessEnv): string {
  return join(userStateDir(env), 'trust.json')
}

function readTrust(env: NodeJS.ProcessEnv): TrustFile {
  try {
    const value = readJson(trustFilePath(env), 'trust') as Partial<TrustFile>
    if (value && typeof value.projects === 'object' && value.projects) return { projects: value.projects }
  } catch {}
  return { projects: {} }
}

function writeTrust(env: NodeJS.ProcessEnv, trust: TrustFile): void {
  const file = trustFilePath(env)
  ensureDir(join(file, '..'))
  replaceFileDurably(file, `${file}.${process.pid}.tmp`, `${JSON.stringify(trust, null, 2)}\n`)
}

function realRoot(projectRoot: string): string {
  try {
    return realPath(projectRoot)
  } catch {
    return projectRoot
  }
}

function sha256(bytes: Buffer): string {
  return sha256Hex(bytes)
}

function configBytes(file: string): Buffer | null {
  try {
    return readBytes(file, 'config')
  } catch {
    return null // missing, or unreadable: the config reader reports the latter, and nothing of it is used
  }
}

/** Whether `configFile` (the project's) holds exactly what the user trusted for this project. */
export function isTrusted(projectRoot: string, configFile: string, env: NodeJS.ProcessEnv): boolean {
  const bytes = configBytes(configFile)
  if (!bytes) return true // nothing to trust
  const entry = readTrust(env).projects[realRoot(projectRoot)]
  return entry?.sha256 === sha256(bytes)
}

export interface TrustResult {
  project: string
  config_file: string
  sha256: string | null
  trusted: boolean
  /** False when the project has no config: nothing was stored, and nothing needs trust. */
  exists?: boolean
  /** What the config sets that can run commands or change where harness works. */
  keys: string[]
}

/** `harness trust`: remembers the project's config as it is now. */
export function trustProject(projectRoot: string, configFile: string, env: NodeJS.ProcessEnv): TrustResult {
  const bytes = configBytes(configFile)
  const root = realRoot(projectRoot)
  // Nothing to trust yet: every command works without a project config, so a CI step that trusts is done.
  if (!bytes)
    return { project: root, config_file: configFile, sha256: null, trusted: true, exists: false, keys: [] }
  const trust = readTrust(env)
  const digest = sha256(bytes)
  trust.projects[root] = { sha256: digest, trusted_at: new Date().toISOString() }
  writeTrust(env, trust)
  return {
    project: root,
    config_file: configFile,
    sha256: digest,
    trusted: true,
    keys: keysThatMatter(bytes),
  }
}

/** `harness untrust`: forgets the project's config. */
export function untrustProject(projectRoot: string, configFile: string, env: NodeJS.ProcessEnv): TrustResult {
  const root = realRoot(projectRoot)
  const trust = readTrust(env)
  const had = root in trust.projects
  delete trust.projects[root]
  if (had) writeTrust(env, trust)
  return { project: root, config_file: configFile, sha256: null, trusted: false, keys: [] }
}

/** Refuses a project config the user has not trusted: exit 4, with what it would do and the trust line. */
export function assertTrusted(projectRoot: string, configFile: string, env: NodeJS.ProcessEnv): void {
  if (isTrusted(projectRoot, configFile, env)) return
  const bytes = configBytes(configFile) ?? Buffer.alloc(0)
  throw new UntrustedConfigError(configFile, projectRoot, keysThatMatter(bytes))
}

export class UntrustedConfigError extends HarnessError {
  constructor(
    readonly file: string,
    readonly project: string,
    readonly keys: string[],
  ) {
    super(
      'UNTRUSTED_CONFIG',
      `the project config ${file} is not trusted${keys.length ? `; it sets ${keys.join(', ')}` : ''}`,
      ExitCode.IllegalState,
      `review it, then run "harness trust" in ${project} (or move the settings to your own config)`,
    )
  }
}

const SHOWN = 60

/** `worktree.setup = "npm ci"`, `providers.claude.command = "..."`: the settings that run or place things. */
function keysThatMatter(bytes: Buffer): string[] {
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch {
    return ['(not valid JSON)']
  }
  if (!value || typeof value !== 'object') return []
  const config = value as Record<string, Record<string, unknown> | undefined>
  const keys: string[] = []
  const show = (key: string, v: unknown) => {
    if (v === undefined) return
    const text = JSON.stringify(v) ?? String(v)
    keys.push(`${key} = ${text.length > SHOWN ? `${text.slice(0, SHOWN - 1)}…` : text}`)
  }
  show('worktree.setup', config.worktree?.setup)
  show('worktree.root', config.worktree?.root)
  show('worktree.include', config.worktree?.include)
  show('defaults.permission', config.defaults?.permission)
  show('defaults.agent', config.defaults?.agent)
  show('hooks.on_status', config.hooks?.on_status)
  show('interactive.host', config.interactive?.host)
  for (const [name, spec] of Object.entries(config.providers ?? {})) show(`providers.${name}`, spec)
  const other = Object.keys(config).filter(
    (k) => !['worktree', 'defaults', 'providers', '$schema'].includes(k),
  )
  for (const key of other) show(key, config[key])
  return keys
}
