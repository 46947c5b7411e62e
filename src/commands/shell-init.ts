import { Argument } from 'commander'
import { action, NO_FLAGS } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'

/** `harness shell-init <shell>` prints the code that defines `hcd <id>` (see cli/shell-init.ts). */
export function registerShellInit(program: CliCommand, ctx: Context): void {
  program
    .command('shell-init')
    .description("print shell code that defines hcd <id>: cd into a session's worktree, or fail and stay")
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
hcd <id> takes an id or a unique prefix (Tab completes them). On any error it
prints harness's error, returns harness's exit code and stays where it was, so
a script under "set -e" stops there. Without it, in a script:
  p=$(harness session path 3f9a) && cd "$p"

Examples:
  eval "$(harness shell-init bash)"         # in ~/.bashrc
  eval "$(harness shell-init zsh)"          # in ~/.zshrc (after compinit, for completion)
  harness shell-init fish | source          # in ~/.config/fish/config.fish
  hcd 3f9a`,
    )
    .action(
      action(NO_FLAGS, async (_options, shell: string) => {
        const { shellInitScript } = (await ctx.services.completion()).shellInit
        ctx.out.writeOut(shellInitScript(shell as 'bash'))
      }),
    )
}
