import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { choiceFlag } from '../../cli/options.js'
import { UsageError } from '../../errors.js'

const EXPORT_FLAGS = {
  format: choiceFlag('--format <format>', 'md (markdown, the default) or json', ['md', 'markdown', 'json'], {
    commanderChecks: true,
  }),
}

export function registerExport(session: CliCommand, ctx: Context): void {
  session
    .command('export <id>')
    .description(
      'one session as a report: runs, checkpoints, files changed, tokens and cost, the end of its log',
    )
    .flags(EXPORT_FLAGS)
    .addHelpText(
      'after',
      `
Markdown renders on GitHub (tables, a fenced log); JSON is one document with the
same facts. --json is --format json (with --format md it is a usage error).

Examples:
  harness session export 3f9a > session-3f9a.md
  harness session export 3f9a --format json | jq '.checkpoints'`,
    )
    .action(
      action(EXPORT_FLAGS, async (options, id: string) => {
        const { exportSession } = (await ctx.services.work()).workExport
        if (ctx.options.json && options.format !== undefined && options.format !== 'json') {
          throw new UsageError(
            `--format ${options.format} and --json ask for two different outputs`,
            'choose one: --format md for markdown, --json (or --format json) for JSON',
          )
        }
        const { logSink } = (await ctx.services.work()).renderLogStream
        const data = await exportSession(ctx, id, (write) => logSink(write))
        if (options.format === 'json' && !ctx.options.json) {
          ctx.out.writeOut(`${JSON.stringify(data, null, 2)}\n`)
          return
        }
        const { renderExportMarkdown } = (await ctx.services.work()).renderExport
        ctx.out.result(data, renderExportMarkdown, { escaped: true })
      }),
    )
}
