import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag } from '../../cli/options.js'
import { UsageError } from '../../errors.js'

const RECOVER_FLAGS = {
  scan: boolFlag(
    '--scan',
    'list RUNNING sessions whose liveness is stale, orphaned or unverified, checkpoints and worktrees not as recorded, and corrupt records',
  ),
  all: boolFlag(
    '--all',
    'recover every stale and unverified session, repair every session, and move corrupt records to .harness/corrupt/',
  ),
}

export function registerRecover(session: CliCommand, ctx: Context): void {
  session
    .command('recover [id]')
    .description(
      'find what a crash left behind (--scan): sessions left RUNNING, missing checkpoint refs or worktrees, corrupt records; repair them (<id> or --all)',
    )
    .flags(RECOVER_FLAGS)
    .addHelpText(
      'after',
      `
Stale and unverified sessions are marked PAUSED (resumable). Orphaned ones
(agent alive, supervisor gone) must be killed first: harness session kill <id>.
A missing checkpoint ref is set again from the commit its record names; a
removed worktree is checked out again from its branch. A record no temporary
file can repair is moved by --all to .harness/corrupt/<file>, beside
<file>.report.txt; it is never deleted.

Examples:
  harness session recover --scan
  harness session recover 3f9a
  harness session recover --all`,
    )
    .action(
      action(RECOVER_FLAGS, async (options, id?: string) => {
        const chosen = [options.scan, options.all, id !== undefined].filter(Boolean).length
        if (chosen !== 1) throw new UsageError('give exactly one of: --scan, --all, or a session id')
        const { scanRecoverable, recoverSessions } = (await ctx.services.control()).controlRecover
        const { renderRecoverScan, renderRecoverResult } = (await ctx.services.control()).renderRun
        if (options.scan) {
          ctx.out.result(await scanRecoverable(ctx), (data) => renderRecoverScan(data, ctx.out.width))
          return
        }
        ctx.out.result(await recoverSessions(ctx, id, options.all === true), renderRecoverResult)
      }),
    )
}
