import { readFileSync } from 'node:fs'
import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../../cli/action.js'
import type { Context } from '../../cli/context.js'
import { UsageError } from '../../errors.js'

export function registerLogs(session: Command, ctx: Context): void {
  session
    .command('logs <id>')
    .description('print the output of a background or headless session')
    .option('-f, --follow', 'keep printing new output until the session ends')
    .addHelpText(
      'after',
      `
--json prints {id, path, content} (not with --follow).

Examples:
  harness session logs -f 3f9a
  harness session logs 3f9a | tail -50`,
    )
    .action(
      action(z.object({ follow: z.optional(z.boolean()) }), async (options, id: string) => {
        if (ctx.options.json && options.follow)
          throw new UsageError('--follow cannot be combined with --json')
        const { sessionLog, streamLog } = await import('../../sessions/logs.js')
        const info = await sessionLog(ctx, id)
        if (ctx.options.json) {
          ctx.out.result({ ...info, content: readFileSync(info.path, 'utf8') }, () => '')
          return
        }
        await streamLog(
          ctx,
          info,
          options.follow === true,
          (chunk) => ctx.out.writeOut(chunk),
          () => ctx.out.closed,
        )
      }),
    )
}
