import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'

export function registerAttach(session: CliCommand, ctx: Context): void {
  session
    .command('attach <id>')
    .description("show a tmux-hosted session's agent in this terminal (detach: Ctrl-b, then d)")
    .addHelpText(
      'after',
      `
For sessions started with "harness run --tmux" (or config interactive.host
"tmux"). Detaching (the tmux prefix, Ctrl-b unless your tmux.conf changes it,
then d) leaves the agent running; closing this terminal does too.

Examples:
  harness run --tmux -a claude "add auth endpoints"
  harness session attach 3f9a`,
    )
    .action(
      action(NO_FLAGS, async (_options, id: string) => {
        const { attachSession } = (await ctx.services.control()).attach
        const { statusLabel } = (await ctx.services.control()).renderSession
        const view = await attachSession(ctx, id)
        ctx.out.info(`harness: detached from ${view.id} (${statusLabel(view)})`)
      }),
    )
}
