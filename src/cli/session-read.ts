import { renderSessionDetail } from '../render/session.js'
import type { SessionEnv } from '../sessions/ports.js'
import { getSession, sessionPath, withFullPrompt } from '../sessions/query/query.js'
import type { Output } from './output.js'

/** What they need of a Context (cli/context.ts, which loads them through cli/lazy.ts). */
type ReadContext = SessionEnv & { readonly out: Output }

/**
 * The work of `session path` and `session show`: their commands run it, and app/entry.ts runs it directly for
 * their plain forms (cli/fast-path.ts), without the command tree. Loaded only when one of them runs.
 */
export async function printSessionPath(ctx: ReadContext, id: string): Promise<void> {
  ctx.out.result(await sessionPath(ctx, id), (data) => data.path, { escaped: true })
}

export async function showSession(ctx: ReadContext, id: string): Promise<void> {
  const view = await withFullPrompt(ctx, await getSession(ctx, id))
  ctx.out.result(view, (data) => renderSessionDetail(data, { color: ctx.out.color }), { escaped: true })
}
