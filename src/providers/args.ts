import { IllegalStateError, UsageError } from '../errors.js'
import { BUILTIN_PROVIDER_NAMES, BUILTIN_PROVIDERS, isBuiltinProvider } from './builtin.js'
import { mergeProviderSpecs, type PerModeTokens, perMode } from './merge.js'
import {
  type HeadlessOutput,
  PERMISSIONS,
  type Permission,
  type Placeholder,
  type ProviderSpec,
} from './schema.js'

export type AgentMode = 'headless' | 'interactive'
export type RunKind = 'start' | 'resume'
export type ModeTokens = Record<AgentMode, string[]>

/** A provider with every field filled: built-in data overlaid with the configuration. */
export interface ResolvedProvider {
  name: string
  /** True when the name is one of the built-in providers (possibly overridden by configuration). */
  builtin: boolean
  description: string | null
  /** null: the first extra argument is the command (the `exec` provider). */
  command: string | null
  mode_args: ModeTokens
  prompt: ModeTokens
  start_args: string[]
  resume: ModeTokens
  resume_by_id: ModeTokens | null
  resume_prompt: string
  dash_prompt: 'separator' | 'leading-space'
  resume_needs_id: boolean
  /** Per level and mode; null: the agent has no such level. */
  permission: Record<Permission, ModeTokens | null>
  model_args: string[] | null
  /** Headless flags of a CLI that enforces a spending limit itself (`{budget}`: what is left, in USD). */
  budget_args: string[] | null
  session_id_capture: { key: string; args: string[] } | null
  refused_as_root: { permission: Permission[]; unless_env: Record<string, string> } | null
  headless_output: HeadlessOutput | null
  /** Each argv (after the command) that prints part of its help; at least `--help`. */
  help_args: string[][]
}

/** What `resolveProvider` needs from the configuration. */
export interface ProvidersConfig {
  providers?: Record<string, ProviderSpec> | undefined
}

const DEFAULT_RESUME_PROMPT = 'continue'
const DEFAULT_PROMPT = ['{prompt}']

/**
 * The provider `name`: a built-in overridden by the configuration, or one the configuration defines.
 * An unknown name is a usage error that lists the known ones.
 */
export function resolveProvider(name: string, config?: ProvidersConfig): ResolvedProvider {
  const configured =
    config?.providers && Object.hasOwn(config.providers, name) ? config.providers[name] : undefined
  const builtin = isBuiltinProvider(name)
  if (!builtin && !configured) {
    throw new UsageError(
      `unknown provider "${name}"; known providers: ${providerNames(config).join(', ')}`,
      'a new provider can be added under "providers" in .harness/config.json',
      'UNKNOWN_PROVIDER',
    )
  }
  const base: ProviderSpec = builtin ? BUILTIN_PROVIDERS[name] : {}
  return fill(name, builtin, configured ? mergeProviderSpecs(base, configured) : base)
}

/** Every provider: built-ins in their documented order, then configured ones by name. */
export function listProviders(config?: ProvidersConfig): ResolvedProvider[] {
  return providerNames(config).map((name) => resolveProvider(name, config))
}

function providerNames(config?: ProvidersConfig): string[] {
  const added = Object.keys(config?.providers ?? {})
    .filter((name) => !isBuiltinProvider(name))
    .sort()
  return [...BUILTIN_PROVIDER_NAMES, ...added]
}

function fill(name: string, builtin: boolean, spec: ProviderSpec): ResolvedProvider {
  const permission = spec.permission ?? {}
  const capture = spec.session_id_capture
  return {
    name,
    builtin,
    description: spec.description ?? null,
    command: spec.command ?? null,
    mode_args: modeTokens(spec.mode_args),
    prompt: modeTokens(spec.prompt === undefined ? DEFAULT_PROMPT : spec.prompt),
    start_args: spec.start_args ?? [],
    resume: modeTokens(spec.resume),
    resume_by_id: spec.resume_by_id ? modeTokens(spec.resume_by_id) : null,
    resume_prompt: spec.resume_prompt ?? DEFAULT_RESUME_PROMPT,
    dash_prompt: spec.dash_prompt ?? 'separator',
    resume_needs_id: spec.resume_needs_id ?? false,
    permission: {
      readonly: levelTokens(permission.readonly),
      // A configured provider's own default is taken as its supervised mode, so it needs no flag unless one
      // is configured (the built-ins pass theirs explicitly: a CLI's default can change).
      supervised: levelTokens(permission.supervised === undefined ? [] : permission.supervised),
      autonomous: levelTokens(permission.autonomous),
    },
    model_args: spec.model_args ?? null,
    budget_args: spec.budget_args ?? null,
    session_id_capture: capture ? { key: capture.key, args: capture.args ?? [] } : null,
    refused_as_root: spec.refused_as_root
      ? { permission: spec.refused_as_root.permission, unless_env: spec.refused_as_root.unless_env ?? {} }
      : null,
    headless_output: spec.headless_output ?? null,
    help_args: spec.help_args?.length ? spec.help_args : [['--help']],
  }
}

function levelTokens(value: string[] | PerModeTokens | null | undefined): ModeTokens | null {
  return value === null || value === undefined ? null : modeTokens(value)
}

function modeTokens(value: string[] | PerModeTokens | null | undefined): ModeTokens {
  const modes = value ? perMode(value) : {}
  return { headless: modes.headless ?? [], interactive: modes.interactive ?? [] }
}

/** True when the provider takes a harness-made session id at start (`{session_id}` in `start_args`). */
export function takesAgentSessionId(provider: ResolvedProvider): boolean {
  return provider.start_args.some((token) => token.includes('{session_id}'))
}

/** A fresh UUID for providers that take one at start, else undefined. */
export function newAgentSessionId(provider: ResolvedProvider): string | undefined {
  return takesAgentSessionId(provider) ? globalThis.crypto.randomUUID() : undefined
}

/** Starts with a letter or digit, so it can never be read as a flag (docs/security.md). */
const AGENT_SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

export interface AgentInvocationInput {
  provider: ResolvedProvider
  mode: AgentMode
  kind: RunKind
  prompt?: string | undefined
  model?: string | undefined
  /** Default: supervised. */
  permission?: Permission | undefined
  /** The agent's own session id: passed at start (providers that take one) and used to resume by id. */
  agentSessionId?: string | undefined
  /** The user's arguments after `--`; for a provider without a command, the command itself. */
  extraArgs?: string[] | undefined
  /** The session's own folder, `.harness/agents/<id>` (absolute): the value of `{agent_dir}`. */
  agentDir?: string | undefined
  /** What is left of the session's budget, in USD: passed through `budget_args` in headless mode. */
  budgetLeftUsd?: number | undefined
}

export interface AgentInvocation {
  command: string
  args: string[]
}

/**
 * The agent's argv, without a shell. Order (docs/providers.md):
 * mode args, permission, model, JSON-capture flags (headless), start or resume tokens, prompt, extra args.
 * Subcommand-style CLIs need the mode first (`codex exec`), and codex accepts `--sandbox` only before
 * `resume`, hence flags before the start/resume tokens. A positional prompt that begins with "-" goes last,
 * after `--`, so neither it nor the extra args can be taken for something else.
 */
export function buildAgentInvocation(input: AgentInvocationInput): AgentInvocation {
  const { provider, mode, kind } = input
  let command = provider.command
  let extraArgs = input.extraArgs ?? []
  if (command === null) {
    const [first, ...rest] = extraArgs
    if (!first) {
      throw new UsageError(
        `${provider.name} needs a command after --`,
        `for example: harness run -a ${provider.name} -- npm test`,
        'MISSING_COMMAND',
      )
    }
    command = first
    extraArgs = rest
  }

  if (input.agentSessionId && !AGENT_SESSION_ID_PATTERN.test(input.agentSessionId)) {
    throw new IllegalStateError(
      `the agent session id ${JSON.stringify(input.agentSessionId)} is not a valid id: it is never passed to the agent`,
      'agent session ids are letters, digits, ".", "_", ":" and "-", starting with a letter or digit',
      'INVALID_AGENT_SESSION_ID',
    )
  }
  const prompt =
    input.prompt || (kind === 'resume' && mode === 'headless' ? provider.resume_prompt : undefined)
  const values: Partial<Record<Placeholder, string>> = {
    prompt,
    model: input.model || undefined,
    session_id: input.agentSessionId || undefined,
    agent_dir: input.agentDir || undefined,
    budget: input.budgetLeftUsd === undefined ? undefined : formatBudget(input.budgetLeftUsd),
  }

  const args = [...substitute(provider.mode_args[mode], values)]
  args.push(...permissionArgs(provider, input.permission ?? 'supervised', mode))
  if (values.model !== undefined) {
    if (!provider.model_args) {
      throw new UsageError(
        `provider "${provider.name}" takes no model`,
        'set "model_args" for it in config.json',
        'UNSUPPORTED_MODEL',
      )
    }
    args.push(...substitute(provider.model_args, values))
  }
  if (mode === 'headless' && provider.session_id_capture) args.push(...provider.session_id_capture.args)
  if (mode === 'headless' && values.budget !== undefined && provider.budget_args) {
    args.push(...substitute(provider.budget_args, values))
  }
  if (kind === 'start') {
    args.push(...substitute(provider.start_args, values))
  } else {
    const byId = values.session_id !== undefined && provider.resume_by_id
    if (!byId && provider.resume_needs_id) {
      throw new IllegalStateError(
        `cannot resume this ${provider.name} session exactly: its ${provider.name} session id was never learnt, and continuing the latest could reach another session's conversation`,
        `start a new session, or find the conversation yourself (${provider.command ?? provider.name} session list) and open it in the worktree`,
        'RESUME_NOT_EXACT',
      )
    }
    args.push(...substitute(byId ? byId[mode] : provider.resume[mode], values))
  }

  const promptPart = promptArgs(provider.prompt[mode], values, provider.dash_prompt)
  if (promptPart.last) return { command, args: [...args, ...extraArgs, ...promptPart.tokens] }
  return { command, args: [...args, ...promptPart.tokens, ...extraArgs] }
}

function permissionArgs(provider: ResolvedProvider, permission: Permission, mode: AgentMode): string[] {
  const tokens = provider.permission[permission]
  if (tokens) return tokens[mode]
  const supported = PERMISSIONS.filter((level) => provider.permission[level] !== null)
  throw new UsageError(
    `provider "${provider.name}" has no ${permission} level; it has: ${supported.join(', ')}`,
    `choose one with -P, e.g. -P ${supported[0] ?? 'supervised'}`,
    'UNSUPPORTED_PERMISSION',
  )
}

/** Every token a provider may pass, in every mode and level (for placeholder and flag checks). */
export function providerTokens(provider: ResolvedProvider): string[] {
  const modes = (tokens: ModeTokens) => [...tokens.headless, ...tokens.interactive]
  return [
    ...modes(provider.mode_args),
    ...modes(provider.prompt),
    ...provider.start_args,
    ...modes(provider.resume),
    ...(provider.resume_by_id ? modes(provider.resume_by_id) : []),
    ...PERMISSIONS.flatMap((level) => {
      const tokens = provider.permission[level]
      return tokens ? modes(tokens) : []
    }),
    ...(provider.model_args ?? []),
    ...(provider.budget_args ?? []),
    ...(provider.session_id_capture?.args ?? []),
  ]
}

/** True when some argv of the provider names `{agent_dir}`: harness then makes `.harness/agents/<id>/`. */
export function usesAgentDir(provider: ResolvedProvider): boolean {
  return providerTokens(provider).some((token) => token.includes('{agent_dir}'))
}

/** True when the provider passes the prompt in this mode (aider's interactive form does not). */
export function takesPrompt(provider: ResolvedProvider, mode: AgentMode): boolean {
  return provider.prompt[mode].some((token) => token.includes('{prompt}'))
}

/**
 * The reason the CLI would refuse to run at this level as this user, if it would (claude refuses
 * --dangerously-skip-permissions as root): said before starting, instead of a run that fails at once.
 */
export function refusalAsRoot(
  provider: ResolvedProvider,
  permission: Permission,
  uid: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const rule = provider.refused_as_root
  if (uid !== 0 || !rule?.permission.includes(permission)) return undefined
  if (Object.entries(rule.unless_env).some(([name, value]) => env[name] === value)) return undefined
  const tokens = provider.permission[permission]
  const flags = [...new Set(tokens ? [...tokens.headless, ...tokens.interactive] : [])].join(' ')
  return `${provider.name} refuses ${flags || `the ${permission} level`} when run as root`
}

const PLACEHOLDER = /\{(prompt|session_id|model|agent_dir|budget)\}/g

/** An amount of USD as a flag's value: plain decimal, at most 6 places (a millionth), no exponent. */
function formatBudget(usd: number): string {
  return String(Math.max(0, Math.floor(usd * 1e6) / 1e6))
}

/**
 * Replaces placeholders in one pass (a prompt that contains "{model}" stays as written). A group that
 * names a placeholder without a value is left out whole: no model, no `--model`.
 */
function substitute(tokens: readonly string[], values: Partial<Record<Placeholder, string>>): string[] {
  const missing = tokens.some((token) =>
    [...token.matchAll(PLACEHOLDER)].some((m) => values[m[1] as Placeholder] === undefined),
  )
  if (missing) return []
  return tokens.map((token) => token.replace(PLACEHOLDER, (_, name: Placeholder) => values[name] ?? ''))
}

/**
 * The prompt tokens, guarded against being read as flags when the prompt begins with "-": a positional
 * prompt gets `--` before it (and must then come last); a flag's value is joined as `--flag=value`, which
 * commander, yargs, clap, argparse and Go's flag packages all read as the value.
 */
function promptArgs(
  template: readonly string[],
  values: Partial<Record<Placeholder, string>>,
  dash: ResolvedProvider['dash_prompt'],
): { tokens: string[]; last: boolean } {
  const prompt = values.prompt
  const at = template.indexOf('{prompt}')
  if (prompt === undefined || at < 0 || !prompt.startsWith('-')) {
    return { tokens: substitute(template, values), last: false }
  }
  const before = substitute(template.slice(0, at), values)
  const after = substitute(template.slice(at + 1), values)
  const flag = before[before.length - 1]
  if (flag?.startsWith('-')) {
    return { tokens: [...before.slice(0, -1), `${flag}=${prompt}`, ...after], last: false }
  }
  if (dash === 'leading-space') return { tokens: [...before, ` ${prompt}`, ...after], last: false }
  return { tokens: [...before, '--', prompt, ...after], last: true }
}
