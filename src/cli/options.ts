import * as z from 'zod/mini'

/**
 * Every flag is declared once, in a `Flags` table per command: the table gives commander its flags,
 * descriptions, defaults, repetition and negation (`CliCommand.flags`, cli/command.ts), gives the action
 * wrapper its zod schema (`flagSchema`), and gives completion its values (`OfferedValues`). This module loads
 * zod only: `session path` validates with it without loading commander.
 */
export interface Flag<S extends z.ZodMiniType = z.ZodMiniType> {
  /** commander's spelling: `-a, --agent <name>`, `--dry-run`, `--no-worktree`. */
  flags: string
  description: string
  /** What the action receives under the flag's key; a failure is a usage error naming the flag (exit 2). */
  schema: S
  /** commander's default, shown in help as `(default: "…")`. */
  default?: string
  /** commander refuses the command without it (for internal commands: `--older-than` of `__auto-cleanup`). */
  required?: boolean
  /** `--status a,b --status c` → ["a", "b", "c"]. */
  repeatable?: boolean
  /** What completion offers (the schema checks them; commander only when `commanderChecks`). */
  choices?: readonly string[]
  /** Let commander check `choices` as it parses (its error, and `(choices: …)` in help). */
  commanderChecks?: boolean
  /** Values completion looks up rather than lists. */
  values?: ValueSource
}

/**
 * Values completion finds at the time: agent names, session ids and names (`session-ids`: ids alone), or the
 * shell's directory names.
 */
export type ValueSource = 'agents' | 'sessions' | 'session-ids' | 'dirs'

/** A command's flags, keyed by the name commander gives their value (`--dry-run` → `dryRun`). */
export type Flags = Readonly<Record<string, Flag>>

/** The options object an action receives for `F`, as its schema parses it. */
export type FlagValues<F extends Flags> = z.output<
  z.ZodMiniObject<{ -readonly [K in keyof F]: F[K]['schema'] }>
>

/** What a declared option tells completion (cli/completion.ts reads it off commander's options). */
export interface OfferedValues {
  offeredChoices?: readonly string[]
  offeredValues?: ValueSource
}

type Extra = Pick<Flag, 'values' | 'choices'>

/**
 * `flag` with its schema made on first read: every command's flags are declared when the command tree is built,
 * and building zod schemas for all of them cost each start more than the one command's parse uses.
 */
function withSchema<S extends z.ZodMiniType>(flag: Omit<Flag, 'schema'>, make: () => S): Flag<S> {
  let made: S | undefined
  return Object.defineProperty(flag, 'schema', {
    get: () => {
      made ??= make()
      return made
    },
    enumerable: true,
  }) as Flag<S>
}

/** `--dry-run`, `-d, --detach`: true when given. */
export function boolFlag(flags: string, description: string): Flag<z.ZodMiniOptional<z.ZodMiniBoolean>> {
  return withSchema({ flags, description }, () => z.optional(z.boolean()))
}

/** `--no-worktree`: commander makes `worktree` true unless the flag is given. */
export function negatedFlag(flags: `--no-${string}`, description: string): Flag<z.ZodMiniBoolean> {
  return withSchema({ flags, description }, () => z.boolean())
}

/** `--base <ref>`: any text; with a default, or required, it is always there. */
export function textFlag(
  flags: string,
  description: string,
  extra?: Extra,
): Flag<z.ZodMiniOptional<z.ZodMiniString>>
export function textFlag(
  flags: string,
  description: string,
  extra: Extra & ({ default: string } | { required: true }),
): Flag<z.ZodMiniString>
export function textFlag(
  flags: string,
  description: string,
  extra: Extra & { default?: string; required?: boolean } = {},
): Flag {
  const always = extra.default !== undefined || extra.required === true
  return withSchema({ flags, description, ...extra }, () => (always ? z.string() : z.optional(z.string())))
}

/** `--sort <key>`: one of `choices` (the usage error lists them); with a default it is always there. */
export function choiceFlag<const T extends readonly [string, ...string[]]>(
  flags: string,
  description: string,
  choices: T,
  extra?: { commanderChecks?: boolean },
): Flag<z.ZodMiniOptional<z.ZodMiniEnum<{ [K in T[number]]: K }>>>
export function choiceFlag<const T extends readonly [string, ...string[]]>(
  flags: string,
  description: string,
  choices: T,
  extra: { default: T[number]; commanderChecks?: boolean },
): Flag<z.ZodMiniEnum<{ [K in T[number]]: K }>>
export function choiceFlag(
  flags: string,
  description: string,
  choices: readonly [string, ...string[]],
  extra: { default?: string; commanderChecks?: boolean } = {},
): Flag {
  return withSchema(
    { flags, description, choices, default: extra.default, commanderChecks: extra.commanderChecks },
    () => (extra.default === undefined ? z.optional(z.enum(choices)) : z.enum(choices)),
  )
}

/** `--status <status>` given as `a,b` or repeated; each item parsed by the schema `item` makes. */
export function listFlag<S extends z.ZodMiniType = z.ZodMiniString>(
  flags: string,
  description: string,
  extra: Extra & { item?: () => S } = {},
): Flag<z.ZodMiniOptional<z.ZodMiniArray<S>>> {
  const { item, ...rest } = extra
  return withSchema({ flags, description, ...rest, repeatable: true }, () =>
    z.optional(z.array(item?.() ?? (z.string() as unknown as S))),
  )
}

/** A flag whose value a schema of its own (made by `schema`, on first use) parses (`--limit <n>` → a number). */
export function parsedFlag<S extends z.ZodMiniType>(
  flags: string,
  description: string,
  schema: () => S,
  extra?: Extra,
): Flag<z.ZodMiniOptional<S>> {
  return withSchema({ flags, description, ...extra }, () => z.optional(schema()))
}

/** The zod schema of a command's flags: what the action wrapper validates commander's option object with. */
export function flagSchema<F extends Flags>(flags: F): z.ZodMiniType<FlagValues<F>> {
  const shape: Record<string, z.ZodMiniType> = {}
  for (const [key, flag] of Object.entries(flags)) shape[key] = flag.schema
  return z.object(shape) as unknown as z.ZodMiniType<FlagValues<F>>
}

/** `--older-than` from a declaration's `--older-than <duration>` (the name usage errors give). */
export function longFlag(flag: Flag): string | undefined {
  return /--[\w-]+/.exec(flag.flags)?.[0]
}

/** "a,b" and repeated flags → ["a", "b"]. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  ]
}
