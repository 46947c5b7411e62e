import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag } from '../../cli/options.js'
import { ExitRequest, UsageError } from '../../errors.js'

const COLLECT_FLAGS = {
  all: boolFlag(
    '--all',
    'every session of the project whose run ended unrecorded, or whose work is not back yet',
  ),
}

export function registerCollect(session: CliCommand, ctx: Context): void {
  session
    .command('collect [id]')
    .description(
      'settle finished container and Slurm sessions: bring their work back and record how they ended (<id> or --all)',
    )
    .flags(COLLECT_FLAGS)
    .addHelpText(
      'after',
      `
Reading commands (list, show, wait, logs) show such a session's real exit code
but change nothing; collect (and run, resume, kill, recover, cleanup, merge,
which do it for the sessions they act on) brings the agent's commits to
harness/<id> and its files to the worktree, frees what the backend held, and
records the outcome. Sessions still running are left as they are.
Exit status 0, or 1 when some session's work could not be brought back.

Examples:
  harness session collect 3f9a
  harness session collect --all --json | jq '.[] | select(.outcome == "failed")'`,
    )
    .action(
      action(COLLECT_FLAGS, async (options, id?: string) => {
        if ((options.all === true) === (id !== undefined)) throw new UsageError('give a session id or --all')
        const { collectSessions } = (await ctx.services.control()).controlSettle
        const { renderCollect } = (await ctx.services.control()).renderCollect
        const outcomes = await collectSessions(ctx, id, options.all === true)
        ctx.out.result(outcomes, renderCollect)
        if (outcomes.some((outcome) => outcome.outcome === 'failed')) throw new ExitRequest(1)
      }),
    )
}
