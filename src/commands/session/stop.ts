import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { textFlag } from '../../cli/options.js'
import { parseDuration } from '../../duration.js'

/** `--grace`, as kill, pause and `chain kill` declare it. */
export const GRACE_FLAGS = {
  grace: textFlag(
    '--grace <duration>',
    'time between SIGTERM and SIGKILL: 500ms, 5s (a bare number is seconds)',
    {
      default: '1.5s',
    },
  ),
}

/** `session kill` and `session pause` differ only in the stop_request they commit. */
export function registerStop(session: CliCommand, ctx: Context, verb: 'kill' | 'pause'): void {
  session
    .command(`${verb} <id>`)
    .description(
      verb === 'kill'
        ? 'stop a running session and everything it started (status KILLED)'
        : 'stop a running session gracefully so it can be resumed (status PAUSED)',
    )
    .flags(GRACE_FLAGS)
    .addHelpText(
      'after',
      `
Exit status: 0 when this request produced the final status; 4 when the session
was not running or ended by itself first.

Example:
  harness session ${verb} 3f9a --grace 5s`,
    )
    .action(
      action(GRACE_FLAGS, async (options, id: string) => {
        const graceMs = parseDuration(options.grace, { bareUnit: 's', flag: '--grace' })
        const { stopSession, stopNotProduced } = (await ctx.services.control()).controlStop
        const { renderStopResult } = (await ctx.services.control()).renderRun
        const result = await stopSession(ctx, id, verb, graceMs)
        if (!result.produced) throw stopNotProduced(result)
        ctx.out.result(result.record, () => renderStopResult(result))
      }),
    )
}
