import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../cli/action.js'
import type { Context } from '../cli/context.js'
import { ensureProjectDirs } from '../project.js'

const ScopeSchema = z.object({ user: z.optional(z.boolean()) })

/** `harness config get/set/unset/list [--user]`: the config files, edited through their schema. */
export function registerConfig(program: Command, ctx: Context): void {
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
  const target = async (user: boolean | undefined) => {
    const { configTarget } = await import('../config-edit.js')
    return configTarget(await ctx.project(), ctx.env, user === true)
  }
  const trustHooks = async () => {
    const paths = await ctx.project()
    const { isTrusted, trustProject } = await import('../trust.js')
    return {
      isTrusted: () => isTrusted(paths.root, paths.configFile, ctx.env),
      trust: () => void trustProject(paths.root, paths.configFile, ctx.env),
    }
  }
  const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))

  config
    .command('get <key>')
    .description('print one value (a string as is, anything else as JSON); exit 4 when it is not set')
    .option('--user', 'your own config file instead of the project one')
    .addHelpText('after', '\nExample:\n  harness config get defaults.agent')
    .action(
      action(ScopeSchema, async (options, key: string) => {
        const { configGet } = await import('../config-edit.js')
        ctx.out.result(configGet(await target(options.user), key), (e) => show(e.value))
      }),
    )
  config
    .command('set <key> <value>')
    .description('set one value (JSON when it parses as JSON, else text); validated before it is written')
    .option('--user', 'your own config file instead of the project one')
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
      action(ScopeSchema, async (options, key: string, value: string) => {
        const { configSet, parseValue } = await import('../config-edit.js')
        // A project file goes inside a .harness that git does not see (its .gitignore).
        if (!options.user) ensureProjectDirs(await ctx.project())
        const change = configSet(await target(options.user), key, parseValue(value), await trustHooks())
        ctx.out.result(change, (c) => `${c.key} = ${show(c.value)} in ${c.file}`)
      }),
    )
  config
    .command('unset <key>')
    .description('remove one value (or a whole section)')
    .option('--user', 'your own config file instead of the project one')
    .addHelpText('after', '\nExample:\n  harness config unset defaults.model')
    .action(
      action(ScopeSchema, async (options, key: string) => {
        const { configUnset } = await import('../config-edit.js')
        const change = configUnset(await target(options.user), key, await trustHooks())
        ctx.out.result(change, (c) => `${c.key} unset in ${c.file}`)
      }),
    )
  config
    .command('list')
    .description('every value set in the file, as key = value (--keys: every key there is)')
    .option('--user', 'your own config file instead of the project one')
    .option('--keys', 'list the keys the schema knows instead')
    .addHelpText('after', '\nExamples:\n  harness config list\n  harness config list --keys')
    .action(
      action(z.object({ user: z.optional(z.boolean()), keys: z.optional(z.boolean()) }), async (options) => {
        const { configList, knownKeys } = await import('../config-edit.js')
        if (options.keys) {
          ctx.out.result(knownKeys(), (keys) => keys.join('\n'))
          return
        }
        const entries = configList(await target(options.user))
        ctx.out.result(entries, (list) => list.map((e) => `${e.key} = ${show(e.value)}`).join('\n'))
      }),
    )
}
