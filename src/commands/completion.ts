import { Argument } from 'commander'
import { action, NO_FLAGS } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'

const SHELL_NAMES = ['bash', 'zsh', 'fish']

/** `harness completion <shell>` prints the script; the hidden `__complete` answers it at each Tab. */
export function registerCompletion(program: CliCommand, ctx: Context): void {
  program
    .command('completion')
    .description('print the shell completion script (commands, flags, agents, session ids)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(SHELL_NAMES))
    .addHelpText(
      'after',
      `
Examples:
  source <(harness completion bash)         # in ~/.bashrc
  source <(harness completion zsh)          # in ~/.zshrc, after compinit
  harness completion fish > ~/.config/fish/completions/harness.fish`,
    )
    .action(
      action(NO_FLAGS, async (_options, shell: string) => {
        const { completionScript } = (await ctx.services.completion()).cliCompletion
        ctx.out.writeOut(completionScript(shell as 'bash'))
      }),
    )
  program
    .command('__complete', { hidden: true })
    .description('internal: completions for the words after --')
    .argument('<shell>')
    .action(
      action(NO_FLAGS, async (_options, shell: string) => {
        const { complete, renderCompletion } = (await ctx.services.completion()).cliCompletion
        const { completionSources } = (await ctx.services.completion()).sessionsCompletion
        const { taskLabel } = (await ctx.services.completion()).renderSession
        const words = ctx.passthrough.length ? ctx.passthrough : ['']
        const result = await complete(program, words, completionSources(ctx, taskLabel))
        ctx.out.writeOut(renderCompletion(result, shell as 'bash'))
      }),
    )
}
