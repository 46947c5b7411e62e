import type { Command } from 'commander'
import * as z from 'zod/mini'
import { UsageError } from '../errors.js'
import { lazy } from './lazy.js'
import { type Flags, type FlagValues, flagSchema, longFlag } from './options.js'

/**
 * Wraps a command action: validates commander's option object with the schema of the command's declared flags
 * (a failure is a usage error naming the flag, exit 2) and passes the typed options, then the positional
 * arguments. The schema is built on the first call, so that help and completion never build one.
 */
export function action<F extends Flags, A extends unknown[]>(
  flags: F,
  handler: (options: FlagValues<F>, ...args: A) => Promise<void> | void,
) {
  let schema: z.ZodMiniType<FlagValues<F>> | undefined
  return async (...received: unknown[]) => {
    const command = received[received.length - 1] as Command
    const options = command.opts()
    schema ??= flagSchema(flags)
    const parsed = z.safeParse(schema, options)
    if (!parsed.success) throw invalidOption(await englishIssue(schema, options), options, flags, command)
    const args = received.slice(0, command.registeredArguments.length) as A
    await handler(parsed.data, ...args)
  }
}

/**
 * The first issue of a failed parse, in English: zod/mini has no messages of its own, and its English ones are
 * loaded only for a failure, not on every command's start.
 */
async function englishIssue(schema: z.ZodMiniType, options: unknown): Promise<z.core.$ZodIssue | undefined> {
  const { default: en } = await lazy.zodEnglish()
  z.config(en())
  const again = z.safeParse(schema, options)
  return again.success ? undefined : again.error.issues[0]
}

/** No flags: for commands that take only arguments. */
export const NO_FLAGS: Flags = {}

/** `invalid value "x" for --sort: expected one of created, updated` from the first zod issue. */
function invalidOption(
  issue: z.core.$ZodIssue | undefined,
  options: Record<string, unknown>,
  flags: Flags,
  command: Command,
): UsageError {
  const path = issue?.path ?? []
  const key = path[0]
  const declared = typeof key === 'string' ? flags[key] : undefined
  const long = declared && longFlag(declared)
  const flag = long ? ` for ${long}` : ''
  let received: unknown = options
  for (const part of path) received = (received as Record<PropertyKey, unknown> | undefined)?.[part]
  const value = typeof received === 'string' ? ` "${received}"` : ''
  const expected =
    issue?.code === 'invalid_value'
      ? `expected one of ${issue.values.map((v) => String(v).toLowerCase()).join(', ')}`
      : (issue?.message ?? 'invalid input')
  return new UsageError(`invalid value${value}${flag}: ${expected}`, `see "${commandPath(command)} --help"`)
}

/** "harness session list" */
export function commandPath(command: Command): string {
  const names: string[] = []
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name())
  return names.join(' ')
}
