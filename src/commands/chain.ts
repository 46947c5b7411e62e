import { action, NO_FLAGS } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { boolFlag, listFlag, textFlag } from '../cli/options.js'
import { parseDuration } from '../duration.js'
import { UsageError } from '../errors.js'
import { permissionFlag } from './run.js'
import { GRACE_FLAGS } from './session/stop.js'

/** `harness chain …`: named, ordered lists of sessions run one after another (docs/continuity.md). */
const CREATE_FLAGS = {
  sessions: listFlag('--sessions <ids>', 'existing sessions as the first steps, in order (comma-separated)', {
    values: 'sessions',
  }),
}

const ADD_FLAGS = {
  agent: textFlag('-a, --agent <name>', "the step's agent (default: defaults.agent, else claude)", {
    values: 'agents',
  }),
  model: textFlag('-m, --model <model>', "passed through the agent's own model flag"),
  permission: permissionFlag('readonly | supervised | autonomous'),
  session: textFlag('--session <id>', 'adopt this existing session as the step', { values: 'sessions' }),
}

const RUN_FLAGS = { detach: boolFlag('-d, --detach', 'run in the background; return at once') }

export function registerChain(program: CliCommand, ctx: Context): void {
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
  registerChainCreate(chain, ctx)
  registerChainAdd(chain, ctx)
  registerChainRun(chain, ctx)
  registerChainStatus(chain, ctx)
  registerChainList(chain, ctx)
  registerChainKill(chain, ctx)
  registerChainRunner(program, ctx)
}

function registerChainCreate(chain: CliCommand, ctx: Context): void {
  chain
    .command('create <name>')
    .description('make an empty chain, or one of existing sessions (--sessions a,b,c)')
    .flags(CREATE_FLAGS)
    .addHelpText(
      'after',
      `
Examples:
  harness chain create auth
  harness chain create review --sessions 3f9a,b2c4`,
    )
    .action(
      action(CREATE_FLAGS, async (options, name: string) => {
        const { createChain } = (await ctx.services.chains()).chains
        const { renderChainStatus } = (await ctx.services.chains()).renderChain
        ctx.out.result(await createChain(ctx, name, options.sessions ?? []), (view) =>
          renderChainStatus(view),
        )
      }),
    )
}

function registerChainAdd(chain: CliCommand, ctx: Context): void {
  chain
    .command('add <name> [prompt...]')
    .description('append a step: a prompt for a new headless session, or --session <id> to adopt one')
    .flags(ADD_FLAGS)
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
      action(ADD_FLAGS, async (options, name: string, words: string[]) => {
        const { addChainStep } = (await ctx.services.chains()).chains
        const { renderChainStatus } = (await ctx.services.chains()).renderChain
        const view = await addChainStep(ctx, name, {
          ...options,
          prompt: words,
          extraArgs: ctx.passthrough,
        })
        ctx.out.result(view, (data) => renderChainStatus(data))
      }),
    )
}

function registerChainRun(chain: CliCommand, ctx: Context): void {
  chain
    .command('run <name>')
    .description('run the steps in order, from the first one not COMPLETED; a step that fails stops it')
    .flags(RUN_FLAGS)
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
      action(RUN_FLAGS, async (options, name: string) => {
        if (ctx.passthrough.length) throw new UsageError('arguments after -- belong to "harness chain add"')
        const { runChain } = (await ctx.services.chains()).chains
        const { renderChainRun } = (await ctx.services.chains()).renderChain
        const { result, exit } = await runChain(ctx, name, { detach: options.detach === true })
        ctx.out.result(result, renderChainRun)
        throw exit
      }),
    )
}

function registerChainStatus(chain: CliCommand, ctx: Context): void {
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
      action(NO_FLAGS, async (_options, name: string) => {
        const { chainStatus } = (await ctx.services.chains()).chains
        const { renderChainStatus } = (await ctx.services.chains()).renderChain
        ctx.out.result(await chainStatus(ctx, name), (view) => renderChainStatus(view))
      }),
    )
}

function registerChainList(chain: CliCommand, ctx: Context): void {
  chain
    .command('list')
    .alias('ls')
    .description('every chain: state, steps done, the next step')
    .addHelpText('after', '\nExamples:\n  harness chain list\n  harness chain list --json')
    .action(
      action(NO_FLAGS, async () => {
        const { listChains } = (await ctx.services.chains()).chains
        const { renderChainList } = (await ctx.services.chains()).renderChain
        ctx.out.result(await listChains(ctx), (views) => renderChainList(views, ctx.out.width))
      }),
    )
}

function registerChainKill(chain: CliCommand, ctx: Context): void {
  chain
    .command('kill <name>')
    .description('stop a running chain: its runner and the step it runs (that step becomes KILLED)')
    .flags(GRACE_FLAGS)
    .addHelpText(
      'after',
      `
Exit status: 0 when the chain was running and is stopped; 4 when it was not
running. "harness chain run <name>" continues later at the killed step.

Example:
  harness chain kill auth`,
    )
    .action(
      action(GRACE_FLAGS, async (options, name: string) => {
        const graceMs = parseDuration(options.grace, { bareUnit: 's', flag: '--grace' })
        const { killChain } = (await ctx.services.chains()).chains
        const { renderChainKill } = (await ctx.services.chains()).renderChain
        ctx.out.result(await killChain(ctx, name, graceMs), renderChainKill)
      }),
    )
}

/** The detached runner `chain run --detach` starts. */
function registerChainRunner(program: CliCommand, ctx: Context): void {
  program
    .command('__chain-run <name>', { hidden: true })
    .description('internal: the detached runner of a chain')
    .action(
      action(NO_FLAGS, async () => {
        const plan = await ctx.readStdin()
        const { runChainDetached } = (await ctx.services.chains()).chains
        await runChainDetached(ctx, plan)
      }),
    )
}
