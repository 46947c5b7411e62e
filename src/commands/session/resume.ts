import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag, textFlag } from '../../cli/options.js'
import { attachAfterStart, promptWords } from '../run.js'

const RESUME_FLAGS = {
  detach: boolFlag('-d, --detach', 'run in the background'),
  tmux: boolFlag('--tmux', 'into a new tmux session (the default for a session last run in tmux)'),
  attach: boolFlag('--attach', 'with --tmux: attach to it at once'),
  prompt: textFlag('--prompt <text>', 'the new prompt, for one that begins with "-"'),
  checkpoint: textFlag(
    '--checkpoint <n>',
    'restore checkpoint <n> first (see "harness session checkpoints")',
  ),
  budget: textFlag(
    '--budget <usd>',
    'a new budget for the session, all runs together: more than it has spent',
  ),
  timeout: textFlag(
    '--timeout <duration>',
    'the most this run may take (90s, 30m, 2h; a bare number is seconds): paused then (exit 124)',
  ),
}

export function registerResume(session: CliCommand, ctx: Context): void {
  session
    .command('resume <id> [prompt...]')
    .alias('continue')
    .description("resume a session's conversation in its worktree (recreated from its branch if removed)")
    .flags(RESUME_FLAGS)
    .addHelpText(
      'after',
      `
Refuses a session that is still running (exit 4). In the foreground, exits with
the agent's exit code (128+n if a signal ended it), like harness run, after a
line on stderr: "<id>: <time the agent ran, pauses left out>, <cost>, <n> files";
--json prints the final record (--detach: as soon as the agent has started). The
arguments given after -- at the start are passed again. A session paused at
its budget (exit 6) goes on with a larger --budget; the cost so far counts.
--timeout bounds this run only (exit 124, PAUSED): an earlier run's does not
carry over.

Examples:
  harness session resume 3f9a
  harness session resume 3f9a "now add the tests"
  harness session resume --tmux --attach 3f9a
  harness session resume 3f9a --checkpoint 2 "try another way"
  harness session resume 3f9a --budget 2.00`,
    )
    .action(
      action(RESUME_FLAGS, async (options, id: string, words: string[]) => {
        const { parseBudget } = (await ctx.services.run()).budget
        const budget = options.budget === undefined ? undefined : parseBudget(options.budget)
        const { runTimeoutFlag } = (await ctx.services.run()).duration
        const timeoutMs = runTimeoutFlag(options.timeout)
        const { resumeSession } = (await ctx.services.run()).start
        const { renderDetachedRun, resumeSummary, runSummary } = (await ctx.services.run()).renderRun
        const outcome = await resumeSession(ctx, id, promptWords(options.prompt, words), {
          detach: options.detach === true,
          tmux: options.attach || options.tmux,
          checkpoint: options.checkpoint,
          budget,
          timeoutMs,
        })
        if (outcome.exit && !ctx.options.json) ctx.out.info(runSummary(outcome.record))
        else ctx.out.result(outcome.record, renderDetachedRun)
        // The session so far, once its run in the foreground ended (stderr, also under --json).
        if (outcome.exit) ctx.out.info(resumeSummary(outcome.record, new Date(ctx.clock.now())))
        if (!outcome.exit) ctx.out.info(runSummary(outcome.record))
        if (outcome.exit) throw outcome.exit
        if (options.attach) await attachAfterStart(ctx, outcome.record.id)
      }),
    )
}
