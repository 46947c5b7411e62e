import * as z from 'zod/mini'

/** Permission levels (docs/providers.md), least to most trusting. */
export const PERMISSIONS = ['readonly', 'supervised', 'autonomous'] as const
export type Permission = (typeof PERMISSIONS)[number]

/**
 * Placeholders that may appear inside any argument token of a provider. `{agent_dir}` is the session's own
 * folder `.harness/agents/<id>/` (docs/providers.md), made by harness when a token names it; `{budget}` what
 * is left of the session's budget in USD (docs/budgets.md).
 */
const PLACEHOLDERS = ['prompt', 'session_id', 'model', 'agent_dir', 'budget'] as const
export type Placeholder = (typeof PLACEHOLDERS)[number]

/** Formats of agents' headless event streams (one JSON object per line). */
export const HEADLESS_OUTPUTS = [
  'claude-stream-json',
  'codex-json',
  'opencode-json',
  'pi-json',
  'gemini-json',
] as const
export type HeadlessOutput = (typeof HEADLESS_OUTPUTS)[number]

const PLACEHOLDER_PATTERN = /\{([A-Za-z0-9_]+)\}/g

/** Names of `{…}` tokens in `token` that are not known placeholders (typos such as `{promt}`). */
function unknownPlaceholders(token: string): string[] {
  return [...token.matchAll(PLACEHOLDER_PATTERN)]
    .map((m) => m[1] ?? '')
    .filter((name) => !(PLACEHOLDERS as readonly string[]).includes(name))
}

const TokenSchema = z.string().check(
  z.refine((token) => unknownPlaceholders(token).length === 0, {
    error: (issue) =>
      `unknown placeholder ${unknownPlaceholders(String(issue.input))
        .map((n) => `{${n}}`)
        .join(', ')} (known: ${PLACEHOLDERS.map((n) => `{${n}}`).join(', ')})`,
  }),
)
const TokensSchema = z.array(TokenSchema)

/** Tokens used in both modes (a list), or per mode (an object; a missing mode keeps what it had). */
const PerModeTokensSchema = z.union(
  [
    TokensSchema,
    z.strictObject({ headless: z.optional(TokensSchema), interactive: z.optional(TokensSchema) }),
  ],
  { error: 'expected a list of strings, or an object with "headless" and/or "interactive" lists' },
)

/** `null` clears what a built-in (or the user's file) set, e.g. `"session_id_capture": null`. */
const clearable = <T extends z.core.SomeType>(schema: T) => z.optional(z.nullable(schema))

/**
 * One provider as written in config.json and in builtin.ts. Every field is optional so that an entry can
 * override part of a built-in; a provider that is not built in needs at least `command`.
 */
export const ProviderSpecSchema = z.strictObject({
  description: clearable(z.string()),
  /** The binary. Absent (the `exec` provider): the first argument after `--` is the command. */
  command: z.optional(z.string().check(z.minLength(1, 'must not be empty'))),
  /** Right after the command, selecting the mode: a subcommand (`exec`, `run`) or a flag (`-p`). */
  mode_args: clearable(PerModeTokensSchema),
  /** How the prompt is passed, e.g. `["{prompt}"]` (positional) or `["--message", "{prompt}"]`. */
  prompt: clearable(PerModeTokensSchema),
  /** Added on a start, e.g. `["--session-id", "{session_id}"]` (harness then generates a UUID). */
  start_args: clearable(TokensSchema),
  /** Added on a resume that continues the agent's latest conversation in the worktree. */
  resume: clearable(PerModeTokensSchema),
  /** Added on a resume when the agent's session id is known, e.g. `["--resume", "{session_id}"]`. */
  resume_by_id: clearable(PerModeTokensSchema),
  /** Prompt of a headless resume that got none (headless CLIs need one). Default "continue". */
  resume_prompt: clearable(z.string().check(z.minLength(1, 'must not be empty'))),
  /**
   * Flags per permission level, for both modes (a list) or per mode (supervised asks interactively and
   * cannot headless); a missing level is not supported by the agent.
   */
  permission: clearable(
    z.strictObject({
      readonly: clearable(PerModeTokensSchema),
      supervised: clearable(PerModeTokensSchema),
      autonomous: clearable(PerModeTokensSchema),
    }),
  ),
  /**
   * How a positional prompt that begins with "-" is kept from being read as an option: `separator` (the
   * default) passes it last, after `--`; `leading-space` passes it with a space before it, for a CLI whose
   * parser has no `--` (pi reads any word beginning with "-" as an option).
   */
  dash_prompt: clearable(z.enum(['separator', 'leading-space'])),
  /**
   * true: a resume without the agent's own session id is refused (exit 4) instead of using `resume`, for a CLI
   * whose "continue the latest" could reach another session's conversation (opencode keys it by project).
   */
  resume_needs_id: clearable(z.boolean()),
  /** The agent's model flag, e.g. `["--model", "{model}"]`. */
  model_args: clearable(TokensSchema),
  /**
   * Headless: the flag of a CLI that enforces a spending limit itself, e.g. `["--max-budget-usd", "{budget}"]`;
   * `{budget}` is what is left of the session's `--budget` in USD (docs/budgets.md).
   */
  budget_args: clearable(TokensSchema),
  /** A JSON key the agent prints in headless output holding its own session id, and the flags that ask for JSON. */
  session_id_capture: clearable(
    z.strictObject({
      key: z.string().check(z.minLength(1, 'must not be empty')),
      args: z.optional(TokensSchema),
    }),
  ),
  /** Levels the CLI refuses to run as root (uid 0) unless one of `unless_env` is set in its environment. */
  refused_as_root: clearable(
    z.strictObject({
      permission: z.array(z.enum(PERMISSIONS)),
      unless_env: z.optional(z.record(z.string(), z.string())),
    }),
  ),
  /** The event stream its headless form prints; harness reads failures from it where the exit code hides them. */
  headless_output: clearable(z.enum(HEADLESS_OUTPUTS)),
  /** The argv (after the command) that print its help, for `doctor`'s flag check: subcommands have their own. */
  help_args: clearable(z.array(TokensSchema)),
})
export type ProviderSpec = z.infer<typeof ProviderSpecSchema>

/** Provider names appear in records, `-a` and config keys: keep them plain. */
export const PROVIDER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
