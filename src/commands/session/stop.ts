import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../../cli/action.js'
import type { Context } from '../../cli/context.js'
import { parseDuration } from '../../duration.js'

const StopOptionsSchema = z.object({ grace: z.string() })

/** `session kill` and `session pause` differ only in the stop_request they commit. */
export function registerStop(session: Command, ctx: Context, verb: 'kill' | 'pause'): void {
  session
    .command(`${verb} <id>`)
    .description(
      verb === 'kill'
        ? 'stop a running session and everything it started (status KILLED)'
        : 'stop a running session gracefully so it can be resumed (status PAUSED)',
    )
    .option(
      '--grace <duration>',
      'time between SIGTERM and SIGKILL: 500ms, 5s (a bare number is seconds)',
      '1.5s',
    )
    .addHelpText(
      'after',
      `
Exit status: 0 when this request produced the final status; 4 when the session
was not running or ended by itself first.

Example:
  harness session ${verb} 3f9a --grace 5s`,
    )
    .action(
      action(StopOptionsSchema, async (options, id: string) => {
        const graceMs = parseDuration(options.grace, { bareUnit: 's', flag: '--grace' })
        const { stopSession, stopNotProduced } = await import('../../sessions/control/control.js')
        const { renderStopResult } = await import('../../render/run.js')
        const result = await stopSession(ctx, id, verb, graceMs)
        if (!result.produced) throw stopNotProduced(result)
        ctx.out.result(result.record, () => renderStopResult(result))
      }),
    )
}
