import { homedir } from 'node:os'
import { dirname, isAbsolute, join, resolve, sep } from 'node:path'
import * as z from 'zod/mini'
import en from 'zod/v4/locales/en.js'
import { BACKEND_NAMES } from './backend-names.js'
import { parseJson, readText, realPath, UnsafeFileError } from './disk/door.js'
import { type DurationInput, parseDuration, type Unit } from './duration.js'
import { ConfigError } from './errors.js'
import { isBuiltinProvider } from './providers/builtin.js'
import { mergeProviderSpecs } from './providers/merge.js'
import {
  PERMISSIONS,
  type Permission,
  PROVIDER_NAME_PATTERN,
  type ProviderSpec,
  ProviderSpecSchema,
} from './providers/schema.js'
import { assertTrusted, UntrustedConfigError } from './trust.js'

// zod/mini ships without messages; the English ones name what was expected.
z.config(en())

export const DEFAULT_AGENT = 'claude'
export const DEFAULT_PERMISSION: Permission = 'supervised'
const DEFAULT_WORKTREE_ROOT = '.harness/worktrees'
const DEFAULT_CLEANUP_OLDER_THAN = '7d'

const NonEmptyStringSchema = z.string().check(z.minLength(1, 'must not be empty'))

/**
 * A duration in a config file: text ("12h", "7d") or a bare number, which means the unit the key's docs state
 * (days for `cleanup.*`, seconds for `checkpoint.interval`), as on the command line.
 */
function durationSchema(bareUnit: Unit) {
  return z.union([z.string(), z.number()]).check(
    z.refine(
      (value) => {
        try {
          parseDuration(String(value), { bareUnit })
          return true
        } catch {
          return false
        }
      },
      {
        error: (issue) =>
          `invalid duration ${JSON.stringify(issue.input)} (use a number of ${bareUnit === 'd' ? 'days' : 'seconds'}, or 90m, 12h, 7d, 2w)`,
      },
    ),
  )
}

const ProviderNameSchema = z
  .string()
  .check(z.regex(PROVIDER_NAME_PATTERN, 'a provider name is letters, digits, ".", "_" and "-"'))

const PriceSchema = z.number().check(z.nonnegative('a price is 0 or more (USD per million tokens)'))

/** USD per million tokens of one model (docs/budgets.md); cached input tokens cost `input` unless given. */
export const ModelPricingSchema = z.strictObject({
  input: PriceSchema,
  output: PriceSchema,
  cached_input: z.optional(PriceSchema),
})
export type ModelPricing = z.infer<typeof ModelPricingSchema>

/** A variable's name (`container.env`, `slurm.env`): only names are ever written, never values. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Slurm's time formats (`--time`): minutes, m:s, h:m:s, d-h, d-h:m, d-h:m:s, or no limit. */
const SLURM_TIME = /^(?:\d{1,7}(?::\d{1,2}){0,2}|\d{1,5}-\d{1,2}(?::\d{1,2}){0,2}|UNLIMITED|INFINITE)$/

/** A partition's or account's name: what Slurm allows, and never something `sbatch` could read as a flag. */
const SLURM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$/

/**
 * Config `slurm.*` (docs/backends.md, "The Slurm backend"). The Slurm module (sessions/backends/slurm/) reads it;
 * it is declared here so that config files are checked whole, by one schema.
 */
export const SlurmConfigSchema = z.strictObject({
  /** `sbatch --partition`. */
  partition: z.optional(z.string().check(z.regex(SLURM_NAME, 'a partition name'))),
  /** `sbatch --account`. */
  account: z.optional(z.string().check(z.regex(SLURM_NAME, 'an account name'))),
  /** Slurm's own time limit of each job (`--time`), unless the run has a `--timeout`. */
  time: z.optional(z.string().check(z.regex(SLURM_TIME, 'a Slurm time limit (minutes, h:m:s, d-h:m:s)'))),
  /** More `sbatch` options, one `--name=value` (or a known bare flag) each (guardOptions). */
  options: z.optional(z.array(z.string())),
  /** A folder the submit host and every node see (the site's shared filesystem); absolute. */
  spool: z.optional(z.string().check(z.regex(/^\//, 'an absolute path'))),
  /** Node-local scratch at the same path on every node; unset, the job's $TMPDIR (or /tmp). */
  scratch: z.optional(z.string().check(z.regex(/^\/[^\0\n]*$/, 'an absolute path'))),
  /** Names of variables the job gets (`--export=NAME,...`): never their values. */
  env: z.optional(z.array(z.string().check(z.regex(ENV_NAME, 'a variable name')))),
})
export type SlurmConfig = z.infer<typeof SlurmConfigSchema>

/** Both files have this shape. Every object is strict: a misspelt key is an error, not silently ignored. */
export const HarnessConfigSchema = z.strictObject({
  /** Lets editors attach a JSON schema; ignored by harness. */
  $schema: z.optional(z.string()),
  providers: z.optional(z.record(ProviderNameSchema, ProviderSpecSchema)),
  defaults: z.optional(
    z.strictObject({
      agent: z.optional(NonEmptyStringSchema),
      permission: z.optional(z.enum(PERMISSIONS)),
      model: z.optional(NonEmptyStringSchema),
    }),
  ),
  worktree: z.optional(
    z.strictObject({
      /** Relative to the project root, or absolute. */
      root: z.optional(NonEmptyStringSchema),
      /** Globs of untracked files copied into each new worktree. */
      include: z.optional(z.array(NonEmptyStringSchema)),
      /** A string runs with `sh -c`; a list is an argv run directly. */
      setup: z.optional(
        z.union(
          [
            NonEmptyStringSchema,
            z.tuple([NonEmptyStringSchema], z.string()), // the command, then its arguments
          ],
          { error: 'expected a shell command string or a non-empty list [command, ...args]' },
        ),
      ),
    }),
  ),
  cleanup: z.optional(
    z.strictObject({
      older_than: z.optional(durationSchema('d')),
      /** The age above which `run` removes sessions in the background, once a day; false turns it off. */
      auto: z.optional(
        z.union([z.literal(false), durationSchema('d')], { error: 'expected a duration or false' }),
      ),
    }),
  ),
  /** Where sessions run (docs/backends.md): this machine (local), a container of podman or docker, Slurm. */
  backend: z.optional(z.enum(BACKEND_NAMES)),
  container: z.optional(
    z.strictObject({
      engine: z.optional(z.enum(['podman', 'docker'])),
      /** The image the agent runs in: it must contain the agent's CLI. */
      image: z.optional(NonEmptyStringSchema),
      /** `--network` of the engine; default none. */
      network: z.optional(NonEmptyStringSchema),
      /** Names of variables passed into the container (their values are never recorded). */
      env: z.optional(z.array(z.string().check(z.regex(ENV_NAME, 'a variable name')))),
    }),
  ),
  /** Sessions on a Slurm cluster (docs/backends.md, "The Slurm backend"). */
  slurm: z.optional(SlurmConfigSchema),
  /** Where an interactive run's agent lives: this terminal (local), or a tmux session (docs/tmux.md). */
  interactive: z.optional(z.strictObject({ host: z.optional(z.enum(['local', 'tmux'])) })),
  hooks: z.optional(
    z.strictObject({
      /** Run (argv, no shell) whenever a session's status or agent state changes (docs/tmux.md). */
      on_status: z.optional(
        z.tuple([NonEmptyStringSchema], z.string(), {
          error: 'expected a non-empty list [command, ...args] (no shell)',
        }),
      ),
    }),
  ),
  /** `interval`: how often a running session is checkpointed when its worktree changed; "0" turns it off. */
  checkpoint: z.optional(z.strictObject({ interval: z.optional(durationSchema('s')) })),
  /** `max_bytes`: the most that `run --context-from` puts before the prompt. */
  context: z.optional(
    z.strictObject({ max_bytes: z.optional(z.number().check(z.int(), z.minimum(256), z.maximum(1048576))) }),
  ),
  /** Prices per model, for agents that report tokens but no cost (`run --budget`, docs/budgets.md). */
  pricing: z.optional(z.record(NonEmptyStringSchema, ModelPricingSchema)),
})
export type HarnessConfig = z.infer<typeof HarnessConfigSchema>

/** `$XDG_CONFIG_HOME/harness/config.json`, else `~/.config/harness/config.json` (a relative XDG path is ignored, per the XDG spec). */
export function userConfigFile(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config')
  return join(base, 'harness', 'config.json')
}

/**
 * The user's file, then the project's (`.harness/config.json`, only once trusted) laid over it. A missing file is an empty
 * one; an unreadable, non-JSON or invalid one is a ConfigError naming the file and the key.
 */
export function loadConfig(options: { projectConfigFile: string; env: NodeJS.ProcessEnv }): HarnessConfig {
  const projectFile = resolve(options.projectConfigFile)
  // A project's config may come from a clone: used only once the user trusted it (docs/security.md).
  if (projectFile !== resolve(userConfigFile(options.env))) {
    assertTrusted(dirname(dirname(projectFile)), projectFile, options.env)
  }
  const files = [userConfigFile(options.env), projectFile]
  const layers: { file: string; config: HarnessConfig }[] = []
  for (const file of new Set(files)) {
    const config = readConfigFile(file)
    if (config) layers.push({ file, config })
  }
  const merged = layers.reduce<HarnessConfig>((base, layer) => mergeConfigs(base, layer.config), {})
  for (const [name, spec] of Object.entries(merged.providers ?? {})) {
    if (isBuiltinProvider(name) || spec.command) continue
    const file = layers.findLast((layer) => layer.config.providers?.[name])?.file ?? files[1]
    throw new ConfigError(
      String(file),
      `providers.${name}.command: required for a provider that is not built in`,
    )
  }
  return merged
}

/** One file, validated; null when it does not exist. */
export function readConfigFile(file: string): HarnessConfig | null {
  let text: string
  try {
    text = readText(file, 'config')
  } catch (error) {
    if (error instanceof UnsafeFileError)
      throw new ConfigError(file, `cannot read it: ${error.reason}`, error)
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw new ConfigError(file, `cannot read it: ${code ?? (error as Error).message}`, error)
  }
  let value: unknown
  try {
    value = parseJson(text)
  } catch (error) {
    // The door's reason says where, never what: the file may be a credential a link led to.
    throw new ConfigError(file, (error as Error).message, error)
  }
  const result = z.safeParse(HarnessConfigSchema, value)
  if (result.success) return result.data
  const problems = result.error.issues.flatMap((issue) => describeIssue(issue, []))
  throw new ConfigError(file, problems.slice(0, 3).join('; '))
}

/** `override` laid over `base`: section by section, provider by provider (see mergeProviderSpecs). */
export function mergeConfigs(base: HarnessConfig, override: HarnessConfig): HarnessConfig {
  const merged: HarnessConfig = {}
  const providers: Record<string, ProviderSpec> = { ...base.providers }
  for (const [name, spec] of Object.entries(override.providers ?? {})) {
    const previous = Object.hasOwn(providers, name) ? providers[name] : undefined
    providers[name] = previous ? mergeProviderSpecs(previous, spec) : spec
  }
  if (Object.keys(providers).length > 0) merged.providers = providers
  if (base.defaults || override.defaults) merged.defaults = { ...base.defaults, ...override.defaults }
  if (base.worktree || override.worktree) merged.worktree = { ...base.worktree, ...override.worktree }
  if (base.cleanup || override.cleanup) merged.cleanup = { ...base.cleanup, ...override.cleanup }
  if (base.interactive || override.interactive)
    merged.interactive = { ...base.interactive, ...override.interactive }
  if (override.backend ?? base.backend) merged.backend = override.backend ?? base.backend
  if (base.container || override.container) merged.container = { ...base.container, ...override.container }
  if (base.slurm || override.slurm) merged.slurm = { ...base.slurm, ...override.slurm }
  if (base.hooks || override.hooks) merged.hooks = { ...base.hooks, ...override.hooks }
  if (base.checkpoint || override.checkpoint)
    merged.checkpoint = { ...base.checkpoint, ...override.checkpoint }
  if (base.context || override.context) merged.context = { ...base.context, ...override.context }
  if (base.pricing || override.pricing) merged.pricing = { ...base.pricing, ...override.pricing }
  return merged
}

/** Where session worktrees go: `worktree.root` against the project root, else `.harness/worktrees`. */
export function worktreeRoot(config: HarnessConfig, projectRoot: string): string {
  return resolve(projectRoot, config.worktree?.root ?? DEFAULT_WORKTREE_ROOT)
}

/**
 * The folders a session's worktree may be removed from (docs/security.md): `.harness/worktrees`, and
 * `worktree.root` when it comes from the user's config or a trusted project config (an untrusted one is not
 * read for this: a narrower set of roots is the safe side).
 */
export function allowedWorktreeRoots(
  projectRoot: string,
  projectConfigFile: string,
  env: NodeJS.ProcessEnv,
): string[] {
  let config: HarnessConfig
  try {
    config = loadConfig({ projectConfigFile, env })
  } catch (error) {
    if (!(error instanceof UntrustedConfigError)) throw error
    config = readConfigFile(userConfigFile(env)) ?? {}
  }
  const roots = [resolve(projectRoot, DEFAULT_WORKTREE_ROOT)]
  if (config.worktree?.root) roots.push(worktreeRoot(config, projectRoot))
  return roots.map((root) => {
    try {
      return realPath(root)
    } catch {
      return root
    }
  })
}

/** Whether `path` (its real path) lies strictly inside one of `roots` (real paths). */
export function isInsideRoots(path: string, roots: string[]): boolean {
  let real: string
  try {
    real = realPath(path)
  } catch {
    real = resolve(path)
  }
  return roots.some((root) => real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`))
}

/** `worktree.setup` as an argv: a string runs through `sh -c`, a list runs as given. */
export function worktreeSetupCommand(config: HarnessConfig): { command: string; args: string[] } | null {
  const setup = config.worktree?.setup
  if (setup === undefined) return null
  if (typeof setup === 'string') return { command: 'sh', args: ['-c', setup] }
  const [command, ...args] = setup
  return { command, args }
}

/**
 * The file whose `worktree.setup` runs: the project's when it sets one (it overrides the user's), else the
 * user's; the project's is named as `.harness/config.json`, as its hint has always said.
 */
export function worktreeSetupSource(projectConfigFile: string, env: NodeJS.ProcessEnv): string {
  try {
    if (readConfigFile(projectConfigFile)?.worktree?.setup !== undefined) return '.harness/config.json'
  } catch {
    // Loading already succeeded; a file changed since then is not this message's business.
  }
  return userConfigFile(env)
}

/** `cleanup.older_than` in milliseconds (default 7 days). */
export function cleanupOlderThanMs(config: HarnessConfig): number {
  return parseDuration(String(cleanupOlderThan(config)), { bareUnit: 'd' })
}

/** `cleanup.older_than` as set (text, or a bare number of days), else the default. */
export function cleanupOlderThan(config: HarnessConfig): DurationInput {
  return config.cleanup?.older_than ?? DEFAULT_CLEANUP_OLDER_THAN
}

const DEFAULT_CHECKPOINT_INTERVAL = '2m'
export const DEFAULT_CONTEXT_MAX_BYTES = 16 * 1024

/** `checkpoint.interval` in milliseconds (default 2 minutes; 0 = no interval checkpoints; a bare number is seconds). */
export function checkpointIntervalMs(config: HarnessConfig): number {
  return parseDuration(String(config.checkpoint?.interval ?? DEFAULT_CHECKPOINT_INTERVAL), { bareUnit: 's' })
}

/** `context.max_bytes` (default 16 KB). */
export function contextMaxBytes(config: HarnessConfig): number {
  return config.context?.max_bytes ?? DEFAULT_CONTEXT_MAX_BYTES
}

/** Readable lines for one zod issue: `providers.claude.command: expected string, received number`. */
function describeIssue(issue: z.core.$ZodIssue, prefix: PropertyKey[]): string[] {
  const path = [...prefix, ...issue.path]
  switch (issue.code) {
    case 'invalid_union': {
      // The branch that got past its own type check explains the problem; otherwise the union's message.
      const relevant = issue.errors.filter(
        (errors) => !errors.every((e) => e.code === 'invalid_type' && e.path.length === 0),
      )
      const [only] = relevant
      if (relevant.length === 1 && only) return only.flatMap((e) => describeIssue(e, path))
      return [`${formatPath(path)}: ${issue.message}`]
    }
    case 'unrecognized_keys':
      return issue.keys.map((key) => `${formatPath([...path, key])}: unknown key`)
    case 'invalid_key':
      return [`${formatPath(path)}: ${issue.issues[0]?.message ?? issue.message}`]
    default:
      return [`${formatPath(path)}: ${issue.message.replace(/^Invalid (input|option): /, '')}`]
  }
}

function formatPath(path: PropertyKey[]): string {
  if (path.length === 0) return '(top level)'
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('')
}
