import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { textFlag } from '../../cli/options.js'

const CHECKPOINT_FLAGS = {
  description: textFlag(
    '-m, --description <message>',
    'what this checkpoint is (shown by "session checkpoints")',
  ),
}

export function registerCheckpoint(session: CliCommand, ctx: Context): void {
  session
    .command('checkpoint <id>')
    .description("save the worktree's complete state as a checkpoint (also while the session runs)")
    .flags(CHECKPOINT_FLAGS)
    .addHelpText(
      'after',
      `
A checkpoint is a commit of every file in the worktree (tracked, modified and
untracked, not ignored ones) stored under refs/harness/<id>/checkpoints/<n>.
The branch, the index, the stash and the files are not touched, so it is safe
while the agent works. Checkpoints are also taken when a run ends and every
checkpoint.interval (default 2m) while it runs, when something changed.

Examples:
  harness session checkpoint 3f9a -m "tests pass"
  harness session checkpoints 3f9a
  harness session restore 3f9a 2`,
    )
    .action(
      action(CHECKPOINT_FLAGS, async (options, id: string) => {
        const { checkpointSession } = (await ctx.services.work()).workCheckpoints
        const { renderCheckpointTaken } = (await ctx.services.work()).renderCheckpoints
        ctx.out.result(await checkpointSession(ctx, id, options.description), renderCheckpointTaken)
      }),
    )
}

export function registerCheckpoints(session: CliCommand, ctx: Context): void {
  session
    .command('checkpoints <id>')
    .description("list a session's checkpoints: number, time, trigger, files changed, message")
    .addHelpText(
      'after',
      `
--json prints {id, checkpoints: [{n, ref, commit, head, message, created_at,
trigger, files_changed, tokens_used}]}.

Examples:
  harness session checkpoints 3f9a
  harness session checkpoints 3f9a --json | jq '.checkpoints[-1].n'`,
    )
    .action(
      action(NO_FLAGS, async (_options, id: string) => {
        const { listSessionCheckpoints } = (await ctx.services.work()).workCheckpoints
        const { renderCheckpointList } = (await ctx.services.work()).renderCheckpoints
        ctx.out.result(await listSessionCheckpoints(ctx, id), (data) =>
          renderCheckpointList(data, { width: ctx.out.width }),
        )
      }),
    )
}

export function registerRestore(session: CliCommand, ctx: Context): void {
  session
    .command('restore <id> <n>')
    .description('put the worktree back at checkpoint <n> (the current state is checkpointed first)')
    .addHelpText(
      'after',
      `
The branch goes back to the commit the checkpoint was taken on, the index to
what was staged then, and the files to exactly what they were: files made since
are removed, deleted ones come back, untracked ones come back untracked. Ignored
files are never touched. A "before-restore" checkpoint of the current state is
taken first, so a restore can always be undone. Refused while the session is
running (exit 4).

Examples:
  harness session restore 3f9a 2
  harness session restore 3f9a 5      # undo: the before-restore checkpoint`,
    )
    .action(
      action(NO_FLAGS, async (_options, id: string, n: string) => {
        const { restoreSession } = (await ctx.services.work()).workCheckpoints
        const { renderRestore } = (await ctx.services.work()).renderCheckpoints
        ctx.out.result(await restoreSession(ctx, id, n), renderRestore)
      }),
    )
}
