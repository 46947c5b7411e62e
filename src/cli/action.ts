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
    const parsed = z.safeParse(schema, command.opts())
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      const flag = issue?.path[0]
        ? `--${String(issue.path[0]).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
        : ''
      throw new UsageError(`invalid value${flag ? ` for ${flag}` : ''}: ${issue?.message ?? 'invalid input'}`)
    }
    const args = received.slice(0, command.registeredArguments.length) as A
    await handler(parsed.data, ...args)
  }
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
