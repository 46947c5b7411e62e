import { action, NO_FLAGS } from '../../cli/action.js'
import type { CliCommand } from '../../cli/command.js'
import type { Context } from '../../cli/context.js'
import { boolFlag, textFlag } from '../../cli/options.js'
import { ExitRequest } from '../../errors.js'
import { REMOVAL_FLAGS, SELECTION_FLAGS, selectionOf } from './cleanup.js'

const ARCHIVE_FLAGS = {
  ...SELECTION_FLAGS,
  output: textFlag('--output <dir>', 'the folder the archive is written to (default: .harness/archives)', {
    values: 'dirs',
  }),
  force: boolFlag('--force', 'also take dirty worktrees and unmerged branches, after snapshotting them'),
  dryRun: REMOVAL_FLAGS.dryRun,
}

export function registerArchive(session: CliCommand, ctx: Context): void {
  session
    .command('archive')
    .description('pack the sessions cleanup would remove into one verified tar.gz, then remove them')
    .flags(ARCHIVE_FLAGS)
    .addHelpText(
      'after',
      `
The sessions are chosen exactly as "session cleanup" chooses them, with the same
safety rules (RUNNING, dirty, unmerged and foreign sessions are kept). The archive,
harness-archive-<time>.tar.gz, holds each session's record, log, agent files and a
git bundle of its branch and checkpoints, with a manifest of sha256 sums. It is
written to a temp name, fsynced and read back against the manifest before any
session is removed. Worktrees are not archived: what they held is on the branch
and in the checkpoints ("session resume" recreates a worktree from the branch).

Examples:
  harness session archive --dry-run
  harness session archive --older-than 30d --output ~/harness-archives
  harness session unarchive ~/harness-archives/harness-archive-20260101T000000Z.tar.gz`,
    )
    .action(
      action(ARCHIVE_FLAGS, async (options) => {
        const { archiveSessions } = (await ctx.services.removal()).removalArchive
        const { anyFailed } = (await ctx.services.removal()).decision
        const { renderArchiveReport } = (await ctx.services.removal()).renderArchive
        const selection = selectionOf(options, ctx, 'archive')
        const report = await archiveSessions(ctx, { ...selection, output: options.output })
        ctx.out.result(report, (data) => renderArchiveReport(data))
        if (anyFailed(report.kept)) throw new ExitRequest(1)
      }),
    )
}

export function registerUnarchive(session: CliCommand, ctx: Context): void {
  session
    .command('unarchive <file> [ids...]')
    .description('verify an archive and restore its sessions (all, or the ids given)')
    .addHelpText(
      'after',
      `
The whole archive is checked against its manifest first; a damaged one is
reported and nothing is restored. Records and logs come back byte for byte,
branches and checkpoint refs at the same commits. A session whose id exists is
refused (exit 4). Worktrees come back on "session resume".

Examples:
  harness session unarchive .harness/archives/harness-archive-20260101T000000Z.tar.gz
  harness session unarchive old.tar.gz 3f9a12c8 && harness session resume 3f9a12c8`,
    )
    .action(
      action(NO_FLAGS, async (_options, file: string, ids: string[]) => {
        const { unarchiveSessions } = (await ctx.services.removal()).unarchive
        const { renderUnarchiveReport } = (await ctx.services.removal()).renderArchive
        // Printed before the restore's journal goes (sessions/removal/unarchive.ts).
        await unarchiveSessions(ctx, file, ids ?? [], (report) =>
          ctx.out.result(report, renderUnarchiveReport),
        )
      }),
    )
}
