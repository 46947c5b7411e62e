import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../../cli/action.js'
import type { Context } from '../../cli/context.js'

export function registerPath(session: Command, ctx: Context): void {
  session
    .command('path <id>')
    .description('print the absolute worktree path of a session (for cd "$(harness session path <id>)")')
    .addHelpText('after', '\nExample:\n  cd "$(harness session path 3f9a)"')
    .action(action(z.object({}), async (_options, id: string) => printSessionPath(ctx, id)))
}

/** The command's work; main.ts also calls it directly for the plain form (see cli/fast-path.ts). */
export async function printSessionPath(ctx: Context, id: string): Promise<void> {
  const { sessionPath } = await import('../../sessions/query.js')
  ctx.out.result(await sessionPath(ctx, id), (data) => data.path, { escaped: true })
}
