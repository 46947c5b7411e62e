import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { UsageError } from '../../errors.js'

export function registerSend(session: CliCommand, ctx: Context): void {
  session
    .command('send <id> [text...]')
    .description("type a line into a tmux-hosted session's agent, then Enter (answer it without attaching)")
    .addHelpText(
      'after',
      `
For running sessions started with "harness run --tmux". The text (its words
joined by spaces) is typed as it is, never read as key names, then Enter; a
control character in it (a newline, Esc, Ctrl-C) is a usage error (exit 2). Any
other session is exit 4. A text that begins with "-" goes after "--".

Examples:
  harness session list                      # STATE "waiting": the agent asks you something
  harness session send 3f9a "1"             # pick the first answer
  harness session send auth "yes, and add tests for it"
  harness session send 3f9a -- "-v"`,
    )
    .action(
      action(NO_FLAGS, async (_options, id: string, given: string[]) => {
        // After "--" too: a text that begins with "-" (the entry keeps those words apart).
        const words = [...given, ...ctx.passthrough]
        if (words.length === 0) {
          throw new UsageError('missing the text to send', 'harness session send <id> "<text>"')
        }
        const { sendToSession } = (await ctx.services.control()).send
        const { renderSend } = (await ctx.services.control()).renderRun
        ctx.out.result(await sendToSession(ctx, id, words.join(' ')), renderSend)
      }),
    )
}
