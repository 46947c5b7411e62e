import type { Command } from 'commander'
import * as z from 'zod/mini'
import { action } from '../cli/action.js'

/** Hidden: the detached supervisor of a background run. Its plan arrives on stdin from `harness run --detach`. */
export function registerSupervise(program: Command): void {
  program
    .command('__supervise', { hidden: true })
    .description('internal: supervise a background run')
    .action(
      action(z.object({}), async () => {
        const chunks: Buffer[] = []
        for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
        const { superviseDetached } = await import('../sessions/runner.js')
        await superviseDetached(Buffer.concat(chunks).toString('utf8'))
      }),
    )
}
