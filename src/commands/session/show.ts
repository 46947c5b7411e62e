import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'

export function registerShow(session: CliCommand, ctx: Context): void {
  session
    .command('show <id>')
    .alias('inspect')
    .description('show every field of a session (--json: the record)')
    .addHelpText(
      'after',
      `
Examples:
  harness session show 3f9a
  harness session show 3f9a --json | jq .status`,
    )
    .action(
      action(NO_FLAGS, async (_options, id: string) =>
        (await ctx.services.reading()).read.showSession(ctx, id),
      ),
    )
}
