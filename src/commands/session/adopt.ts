import { action } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag } from '../../cli/options.js'
import { UsageError } from '../../errors.js'
import type { AdoptionItem, AdoptionResult } from '../../sessions/control/adopt.js'

const ADOPT_FLAGS = {
  all: boolFlag('--all', 'every foreign record'),
  yes: boolFlag('-y, --yes', 'do not ask (required when stdin is not a terminal)'),
}

export function registerAdopt(session: CliCommand, ctx: Context): void {
  session
    .command('adopt [id]')
    .description(
      'take responsibility for records harness did not seal (foreign): show what they name, then seal them',
    )
    .flags(ADOPT_FLAGS)
    .addHelpText(
      'after',
      `
A foreign record (from a clone, or an older harness) is shown but never acted on: no signal, resume or removal.
Adopt only records you know: their provider, arguments and worktree will be used as they are.

Examples:
  harness session show 3f9a && harness session adopt 3f9a
  harness session adopt --all --yes`,
    )
    .action(
      action(ADOPT_FLAGS, async (options, id?: string) => {
        if ((options.all === true) === (id !== undefined)) throw new UsageError('give a session id or --all')
        const { adoptSessions } = (await ctx.services.setup()).adopt
        const result = await adoptSessions(ctx, id, {
          all: options.all === true,
          yes: options.yes === true,
          interactive: ctx.stdinIsTerminal,
          confirm: (items) => confirm(ctx, items),
        })
        ctx.out.result(result, renderAdoption)
      }),
    )
}

/**
 * Every field adopt will seal that harness acts on (`AdoptionItem.fields`), one a line; a list of objects (runs,
 * checkpoints) one element a line. Escaped for the terminal by the caller.
 */
function describeItem(item: AdoptionItem): string {
  const lines = [`${item.id}: provider ${item.provider}, permission ${item.permission ?? '-'}`]
  for (const [field, value] of Object.entries(item.fields)) {
    if (Array.isArray(value) && value.some((one) => typeof one === 'object' && one !== null)) {
      value.forEach((one, i) => {
        lines.push(`  ${field}[${i}]: ${JSON.stringify(one)}`)
      })
    } else lines.push(`  ${field}: ${JSON.stringify(value)}`)
  }
  if (item.branch && !item.may_delete_branch) {
    lines.push(`  (branch ${item.branch} is never deleted by cleanup: harness cannot prove it made it)`)
  }
  return lines.join('\n')
}

async function confirm(ctx: Context, items: AdoptionItem[]): Promise<boolean> {
  const { terminalSafe } = (await ctx.services.setup()).renderSafe
  ctx.out.stderr.write(`${terminalSafe(items.map(describeItem).join('\n'))}\n`)
  // The prompt goes out through Output's stderr; readline only reads the answer (the terminal echoes it).
  ctx.out.stderr.write(
    `Seal ${items.length === 1 ? 'this record' : `these ${items.length} records`} as yours? [y/N] `,
  )
  // Loaded here: node:readline costs every other command's start (docs/development/native.md, "Start-up").
  const { createInterface } = process.getBuiltinModule('node:readline/promises')
  const rl = createInterface({ input: ctx.stdin })
  try {
    const answer = await rl.question('')
    return /^y(es)?$/i.test(answer.trim())
  } finally {
    rl.close()
  }
}

function renderAdoption(result: AdoptionResult): string {
  const lines = result.adopted.map(
    (item) => `${item.adopted ? 'adopted' : 'not adopted'} ${describeItem(item)}`,
  )
  if (result.already_sealed.length) lines.push(`already sealed: ${result.already_sealed.join(', ')}`)
  return lines.length ? lines.join('\n') : 'No foreign sessions.'
}
