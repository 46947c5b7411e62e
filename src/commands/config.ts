import { action } from '../cli/action.js'
import type { CliCommand } from '../cli/command.js'
import type { Context } from '../cli/context.js'
import { boolFlag } from '../cli/options.js'

const SCOPE_FLAGS = { user: boolFlag('--user', 'your own config file instead of the project one') }
const LIST_FLAGS = { ...SCOPE_FLAGS, keys: boolFlag('--keys', 'list the keys the schema knows instead') }

/** `harness config get/set/unset/list [--user]`: the config files, edited through their schema. */
export function registerConfig(program: CliCommand, ctx: Context): void {
  const config = program
    .command('config')
    .description('read and change configuration (the project .harness/config.json, or yours with --user)')
    .addHelpCommand(false)
    .addHelpText(
      'after',
      `
Examples:
  harness config set defaults.agent codex
  harness config get worktree.setup --user`,
    )
  registerGet(config, ctx)
  registerSet(config, ctx)
  registerUnset(config, ctx)
  registerList(config, ctx)
}

/** The file a subcommand reads or writes: the project's, or the user's with --user. */
async function target(ctx: Context, user: boolean | undefined) {
  const { configTarget } = (await ctx.services.setup()).configEdit
  return configTarget(await ctx.project(), ctx.env, user === true)
}

/** A change keeps the project's trust as it was (trusted stays trusted, untrusted stays untrusted). */
async function trustHooks(ctx: Context) {
  const paths = await ctx.project()
  const { isTrusted, trustProject } = (await ctx.services.setup()).trust
  return {
    isTrusted: () => isTrusted(paths.root, paths.configFile, ctx.env),
    trust: () => void trustProject(paths.root, paths.configFile, ctx.env),
  }
}

function show(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function registerGet(config: CliCommand, ctx: Context): void {
  config
    .command('get <key>')
    .description('print one value (a string as is, anything else as JSON); exit 4 when it is not set')
    .flags(SCOPE_FLAGS)
    .addHelpText('after', '\nExample:\n  harness config get defaults.agent')
    .action(
      action(SCOPE_FLAGS, async (options, key: string) => {
        const { configGet } = (await ctx.services.setup()).configEdit
        ctx.out.result(configGet(await target(ctx, options.user), key), (e) => show(e.value))
      }),
    )
}

function registerSet(config: CliCommand, ctx: Context): void {
  config
    .command('set <key> <value>')
    .description('set one value (JSON when it parses as JSON, else text); validated before it is written')
    .flags(SCOPE_FLAGS)
    .addHelpText(
      'after',
      `
A project config that was trusted stays trusted after harness changes it; one
that was not stays untrusted ("harness trust" after reviewing it).

Examples:
  harness config set defaults.permission autonomous
  harness config set worktree.setup '["npm", "ci"]'
  harness config set --user providers.claude.command /opt/claude/bin/claude`,
    )
    .action(
      action(SCOPE_FLAGS, async (options, key: string, value: string) => {
        const { configSet, parseValue } = (await ctx.services.setup()).configEdit
        // A project file goes inside a .harness that git does not see (its .gitignore).
        if (!options.user) {
          const { ensureProject } = (await ctx.services.setup()).projectIndex
          await ensureProject(ctx.env, await ctx.project())
        }
        const change = configSet(
          await target(ctx, options.user),
          key,
          parseValue(value),
          await trustHooks(ctx),
        )
        ctx.out.result(change, (c) => `${c.key} = ${show(c.value)} in ${c.file}`)
      }),
    )
}

function registerUnset(config: CliCommand, ctx: Context): void {
  config
    .command('unset <key>')
    .description('remove one value (or a whole section)')
    .flags(SCOPE_FLAGS)
    .addHelpText('after', '\nExample:\n  harness config unset defaults.model')
    .action(
      action(SCOPE_FLAGS, async (options, key: string) => {
        const { configUnset } = (await ctx.services.setup()).configEdit
        const change = configUnset(await target(ctx, options.user), key, await trustHooks(ctx))
        ctx.out.result(change, (c) => `${c.key} unset in ${c.file}`)
      }),
    )
}

function registerList(config: CliCommand, ctx: Context): void {
  config
    .command('list')
    .description('every value set in the file, as key = value (--keys: every key there is)')
    .flags(LIST_FLAGS)
    .addHelpText('after', '\nExamples:\n  harness config list\n  harness config list --keys')
    .action(
      action(LIST_FLAGS, async (options) => {
        const { configList, knownKeys } = (await ctx.services.setup()).configEdit
        if (options.keys) {
          ctx.out.result(knownKeys(), (keys) => keys.join('\n'))
          return
        }
        const entries = configList(await target(ctx, options.user))
        ctx.out.result(entries, (list) => list.map((e) => `${e.key} = ${show(e.value)}`).join('\n'))
      }),
    )
}
