import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { textFlag } from '../../cli/options.js'
import { parseDuration } from '../../duration.js'
import { ExitRequest } from '../../errors.js'

const WAIT_FLAGS = {
  timeout: textFlag(
    '--timeout <duration>',
    'give up after this long (exit 124): 90s, 30m, 1h (a bare number is seconds)',
  ),
}

export function registerWait(session: CliCommand, ctx: Context): void {
  session
    .command('wait <id>')
    .description("wait until a session is no longer running; exit with the agent's exit code")
    .flags(WAIT_FLAGS)
    .addHelpText(
      'after',
      `
Exit status: the agent's exit code (128+n if a signal ended it), 4 for PAUSED
(6 when paused at its --budget), 124 on timeout. It prints the final status line
(nothing under -q); --json prints the final record.

Example:
  harness session wait "$id" --timeout 1h || echo "failed or timed out: $?"`,
    )
    .action(
      action(WAIT_FLAGS, async (options, id: string) => {
        const timeoutMs =
          options.timeout === undefined
            ? undefined
            : parseDuration(options.timeout, { bareUnit: 's', flag: '--timeout' })
        const { waitForSession, waitExitCode } = (await ctx.services.wait()).controlWait
        const { renderWaitResult } = (await ctx.services.wait()).renderRun
        const record = await waitForSession(ctx, id, timeoutMs)
        // -q: the exit status says it all; --json still prints the record.
        if (ctx.out.json || !ctx.quiet) ctx.out.result(record, renderWaitResult)
        const code = waitExitCode(record)
        if (code !== 0) throw new ExitRequest(code)
      }),
    )
}
