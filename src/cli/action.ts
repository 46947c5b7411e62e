import type { Command } from 'commander'
import * as z from 'zod/mini'
import { UsageError } from '../errors.js'

/**
 * Wraps a command action: validates commander's option object with a zod schema (a failure is a usage error,
 * exit 2) and passes the typed options, then the positional arguments.
 */
export function action<S extends z.ZodMiniType, A extends unknown[]>(
  schema: S,
  handler: (options: z.infer<S>, ...args: A) => Promise<void> | void,
) {
  return async (...received: unknown[]) => {
    const command = received[received.length - 1] as Command
    const options = command.opts()
    const parsed = z.safeParse(schema, options)
    if (!parsed.success) throw invalidOption(parsed.error.issues[0], options, command)
    const args = received.slice(0, command.registeredArguments.length) as A
    await handler(parsed.data, ...args)
  }
}

/** `invalid value "x" for --sort: expected one of created, updated` from the first zod issue. */
function invalidOption(
  issue: z.core.$ZodIssue | undefined,
  options: Record<string, unknown>,
  command: Command,
): UsageError {
  const path = issue?.path ?? []
  const key = path[0]
  const flag = key ? ` for --${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}` : ''
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

/** "a,b" and repeated flags → ["a", "b"]; used by list filters. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean),
  ]
}
