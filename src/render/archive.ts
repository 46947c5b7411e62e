import { shellWord } from '../errors.js'
import type { ArchiveReport } from '../sessions/removal/archive.js'
import type { UnarchiveReport } from '../sessions/removal/unarchive.js'
import { renderRemovalReport } from './cleanup.js'
import { terminalSafeLine } from './safe.js'

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

export function renderArchiveReport(report: ArchiveReport, now: Date = new Date()): string {
  const lines: string[] = []
  const archive = report.archive
  if (!archive) {
    // One message: the report's own empty line says it, else it follows under this one.
    const rest = renderRemovalReport(report, now, 'Nothing to archive.')
    const empty = report.removed.length === 0 && report.kept.length === 0
    return empty ? rest : `Nothing to archive.\n${rest}`
  }
  if (report.dry_run) {
    lines.push(`Would write ${archive.path} with ${plural(archive.sessions.length, 'session')}.`)
  } else {
    const size = archive.bytes === null ? '' : `, ${archive.bytes.toLocaleString('en-US')} bytes`
    lines.push(`Wrote ${archive.path} (${plural(archive.sessions.length, 'session')}${size}, verified).`)
    lines.push(`Restore with: harness session unarchive ${shellWord(archive.path)} [id...]`)
  }
  const rest = renderRemovalReport(report, now)
  return rest ? `${lines.join('\n')}\n${rest}` : lines.join('\n')
}

export function renderUnarchiveReport(report: UnarchiveReport): string {
  const lines = [`Restored ${plural(report.restored.length, 'session')} from ${report.archive}:`]
  for (const s of report.restored) {
    const parts = [s.log ? 'log' : null, s.agent_files ? plural(s.agent_files, 'agent file') : null]
    const branch = s.refs.find((r) => r.ref.startsWith('refs/heads/'))
    if (branch) parts.push(`branch ${branch.ref.slice('refs/heads/'.length)}`)
    const checkpoints = s.refs.filter((r) => !r.ref.startsWith('refs/heads/')).length
    if (checkpoints) parts.push(plural(checkpoints, 'checkpoint'))
    lines.push(
      `  ${s.id}  record${parts
        .filter(Boolean)
        .map((p) => `, ${p}`)
        .join('')}`,
    )
    // A ref the manifest lists that the session does not own is left out (unarchive.ts, ownsRef): one line each.
    for (const ref of s.skipped_refs) {
      lines.push(
        `    skipped ref ${terminalSafeLine(ref)}: not the session's own (only harness/${s.id} and its checkpoints are restored)`,
      )
    }
  }
  if (report.restored.length)
    lines.push('"harness session resume <id>" recreates a worktree from its branch.')
  return lines.join('\n')
}
