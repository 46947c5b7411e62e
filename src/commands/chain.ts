import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action, collect } from '../cli/action.js'
import type { Context } from '../cli/context.js'
import { parseDuration } from '../duration.js'
import { UsageError } from '../errors.js'
import { PermissionSchema } from './run.js'

/** `harness chain …`: named, ordered lists of sessions run one after another (docs/continuity.md). */
export function registerChain(program: Command, ctx: Context): void {
  const chain = program
    .command('chain')
    .description("run sessions in stages: each step starts from the previous step's branch")
    .addHelpCommand(false)
    .addHelpText(
      'after',
      `
Examples:
  harness chain create auth
  harness chain add auth -a claude "design the auth API, write it to docs/auth.md"
  harness chain add auth -a codex "implement docs/auth.md"
  harness chain add auth -a exec -- npm test
  harness chain run auth --detach
  harness chain status auth`,
    )

  chain
    .command('create <name>')
    .description('make an empty chain, or one of existing sessions (--sessions a,b,c)')
    .option('--sessions <ids>', 'existing sessions as the first steps, in order (comma-separated)', collect)
    .addHelpText(
      'after',
      `
Examples:
  harness chain create auth
  harness chain create review --sessions 3f9a,b2c4`,
    )
    .action(
      action(z.object({ sessions: z.optional(z.array(z.string())) }), async (options, name: string) => {
        const { createChain } = await import('../sessions/chains/chains.js')
        const { renderChainStatus } = await import('../render/chain.js')
        ctx.out.result(await createChain(ctx, name, options.sessions ?? []), (view) =>
          renderChainStatus(view),
        )
      }),
    )

  chain
    .command('add <name> [prompt...]')
    .description('append a step: a prompt for a new headless session, or --session <id> to adopt one')
    .option('-a, --agent <name>', "the step's agent (default: defaults.agent, else claude)")
    .option('-m, --model <model>', "passed through the agent's own model flag")
    .option('-P, --permission <mode>', 'readonly | supervised | autonomous')
    .option('--session <id>', 'adopt this existing session as the step')
    .addHelpText(
      'after',
      `
Arguments after -- are the step's agent arguments (for -a exec: the command).

Examples:
  harness chain add auth -a claude "write failing tests for login"
  harness chain add auth -a codex -P autonomous "make the tests pass"
  harness chain add auth -a exec -- npm test
  harness chain add auth --session 3f9a`,
    )
    .action(
      action(
        z.object({
          agent: z.optional(z.string()),
          model: z.optional(z.string()),
          permission: z.optional(PermissionSchema),
          session: z.optional(z.string()),
        }),
        async (options, name: string, words: string[]) => {
          const { addChainStep } = await import('../sessions/chains/chains.js')
          const { renderChainStatus } = await import('../render/chain.js')
          const view = await addChainStep(ctx, name, {
            ...options,
            prompt: words,
            extraArgs: ctx.passthrough,
          })
          ctx.out.result(view, (data) => renderChainStatus(data))
        },
      ),
    )

  chain
    .command('run <name>')
    .description('run the steps in order, from the first one not COMPLETED; a step that fails stops it')
    .option('-d, --detach', 'run in the background; return at once')
    .addHelpText(
      'after',
      `
Each step is a headless session whose worktree starts from the previous step's
branch (work it left uncommitted is committed there first). Running the chain
again continues at the step that stopped it (a PAUSED, FAILED or KILLED step is
resumed). Exit status in the foreground: 0 when every step completed, else 1.

Examples:
  harness chain run auth
  harness chain run auth --detach && harness chain status auth`,
    )
    .action(
      action(z.object({ detach: z.optional(z.boolean()) }), async (options, name: string) => {
        if (ctx.passthrough.length) throw new UsageError('arguments after -- belong to "harness chain add"')
        const { runChain } = await import('../sessions/chains/chains.js')
        const { renderChainRun } = await import('../render/chain.js')
        const { result, exit } = await runChain(ctx, name, { detach: options.detach === true })
        ctx.out.result(result, renderChainRun)
        throw exit
      }),
    )

  chain
    .command('status <name>')
    .description('each step with its session, status (PENDING before it runs) and time')
    .addHelpText(
      'after',
      `
Examples:
  harness chain status auth
  harness chain status auth --json | jq -r '.steps[] | "\\(.n) \\(.status)"'`,
    )
    .action(
      action(z.object({}), async (_options, name: string) => {
        const { chainStatus } = await import('../sessions/chains/chains.js')
        const { renderChainStatus } = await import('../render/chain.js')
        ctx.out.result(await chainStatus(ctx, name), (view) => renderChainStatus(view))
      }),
    )

  chain
    .command('list')
    .alias('ls')
    .description('every chain: state, steps done, the next step')
    .addHelpText('after', '\nExamples:\n  harness chain list\n  harness chain list --json')
    .action(
      action(z.object({}), async () => {
        const { listChains } = await import('../sessions/chains/chains.js')
        const { renderChainList } = await import('../render/chain.js')
        ctx.out.result(await listChains(ctx), (views) => renderChainList(views, ctx.out.width))
      }),
    )

  chain
    .command('kill <name>')
    .description('stop a running chain: its runner and the step it runs (that step becomes KILLED)')
    .option(
      '--grace <duration>',
      'time between SIGTERM and SIGKILL: 500ms, 5s (a bare number is seconds)',
      '1.5s',
    )
    .addHelpText(
      'after',
      `
Exit status: 0 when the chain was running and is stopped; 4 when it was not
running. "harness chain run <name>" continues later at the killed step.

Example:
  harness chain kill auth`,
    )
    .action(
      action(z.object({ grace: z.string() }), async (options, name: string) => {
        const graceMs = parseDuration(options.grace, { bareUnit: 's', flag: '--grace' })
        const { killChain } = await import('../sessions/chains/chains.js')
        const { renderChainKill } = await import('../render/chain.js')
        ctx.out.result(await killChain(ctx, name, graceMs), renderChainKill)
      }),
    )

  program
    .command('__chain-run <name>', { hidden: true })
    .description('internal: the detached runner of a chain')
    .action(
      action(z.object({}), async () => {
        const plan = await ctx.readStdin()
        const { runChainDetached } = await import('../sessions/chains/chains.js')
        await runChainDetached(ctx, plan)
      }),
    )
}
