import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag } from '../../cli/options.js'
import { UsageError } from '../../errors.js'

const LOGS_FLAGS = {
  follow: boolFlag('-f, --follow', 'keep printing new output until the session ends'),
  raw: boolFlag('--raw', 'print the log as the agent wrote it (JSON events and all)'),
}

export function registerLogs(session: CliCommand, ctx: Context): void {
  session
    .command('logs <id>')
    .description('print the output of a background or headless session, readable')
    .flags(LOGS_FLAGS)
    .addHelpText(
      'after',
      [
        '',
        'JSON event streams (claude stream-json, codex --json, gemini, opencode, pi) are shown as messages,',
        'tool calls, results, errors and token usage, with a header line where each run begins; other lines',
        'are printed as they are. --json prints {id, path, content} with the raw content (not with --follow).',
        '',
        'Examples:',
        '  harness session logs 3f9a',
        '  harness session logs 3f9a -f',
        '  harness session logs 3f9a --raw | jq -c \'select(.type == "result")\'',
      ].join('\n'),
    )
    .action(
      action(LOGS_FLAGS, async (options, id: string) => {
        if (ctx.options.json && options.follow)
          throw new UsageError('--follow cannot be combined with --json')
        const { logContent, sessionLog, streamLog } = (await ctx.services.logs()).logs
        const info = await sessionLog(ctx, id)
        if (ctx.options.json) {
          ctx.out.result({ id: info.id, path: info.path, content: logContent(info) }, () => '')
          return
        }
        const closed = () => ctx.out.closed
        if (options.raw) {
          await streamLog(ctx, info, options.follow === true, { feed: (c) => ctx.out.writeOut(c) }, closed)
          return
        }
        const { logSink } = (await ctx.services.logs()).renderLogStream
        const sink = logSink((text) => ctx.out.writeOut(text), ctx.out.color, info.terminal)
        await streamLog(ctx, info, options.follow === true, sink, closed)
      }),
    )
}
