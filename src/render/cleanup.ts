import type {
  KeepReason,
  PrunedItem,
  PruneReport,
  RemovalReport,
  RemovedSession,
  SnapshotRefs,
} from '../sessions/removal/report.js'
import { relativeTime } from './time.js'

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** `session cleanup` and `session delete`: what was removed, what was kept and why, how to restore. */
export function renderRemovalReport(
  report: RemovalReport,
  now: Date = new Date(),
  /** What an empty report says (archive says "Nothing to archive."). */
  nothing = 'No sessions to clean up.',
): string {
  const lines: string[] = []
  const dry = report.dry_run
  if (dry) lines.push('Dry run: nothing was changed.')
  // One set of column widths for both lists, so that ids, statuses and ages line up.
  const listed = [...report.removed, ...report.kept]
  const widthOf = (value: (s: (typeof listed)[number]) => string) =>
    Math.max(0, ...listed.map((s) => value(s).length))
  const age = (s: (typeof listed)[number]) => relativeTime(s.last_active_at, now)
  const widths = { id: widthOf((s) => s.id), status: widthOf((s) => s.status), age: widthOf(age) }
  const head = (s: (typeof listed)[number]) =>
    `  ${s.id.padEnd(widths.id)}  ${s.status.padEnd(widths.status)}  ${age(s).padEnd(widths.age)}  `
  if (report.removed.length) {
    lines.push(`${dry ? 'Would remove' : 'Removed'} ${plural(report.removed.length, 'session')}:`)
    for (const s of report.removed) lines.push(`${head(s)}${removedParts(s)}`)
  }
  if (report.kept.length) {
    lines.push(`${dry ? 'Would keep' : 'Kept'} ${plural(report.kept.length, 'session')}:`)
    for (const s of report.kept) {
      const [first, ...rest] = s.reasons
      const start = head(s)
      lines.push(`${start}${first ? reasonText(first) : ''}`)
      for (const reason of rest) lines.push(`${' '.repeat(start.length)}${reasonText(reason)}`)
    }
    if (report.kept.some((s) => s.reasons.some((r) => r.kind === 'unsafe'))) {
      lines.push('  (--force stores a snapshot under refs/harness/<id>/ first, then removes them)')
    }
  }
  lines.push(
    ...renderSnapshots(
      report.snapshots.map((s) => ({ ...s, name: s.id })),
      dry,
    ),
  )
  if (report.skipped) {
    const { running, younger, filtered } = report.skipped
    const parts = [
      running ? `${running} running` : '',
      younger ? `${younger} younger than ${report.older_than ?? 'the threshold'}` : '',
      filtered ? `${filtered} with other statuses` : '',
    ].filter(Boolean)
    if (!report.removed.length && !report.kept.length) lines.push(nothing)
    if (parts.length) lines.push(`Left alone: ${parts.join(', ')}.`)
  } else if (!report.removed.length && !report.kept.length) {
    lines.push('Nothing to remove.')
  }
  return lines.join('\n')
}

function removedParts(s: RemovedSession): string {
  if (s.record_only) return 'record file only (foreign: nothing it names was touched)'
  const parts: string[] = []
  if (s.worktree) parts.push('worktree')
  if (s.branch) {
    const why =
      s.branch.merged_into === 'base_commit'
        ? 'no commits of its own'
        : s.branch.merged_into
          ? `merged into ${s.branch.merged_into}`
          : 'unmerged, snapshot kept'
    parts.push(`branch ${s.branch.name} (${why})`)
  }
  if (s.log) parts.push('log')
  parts.push('record')
  return parts.join(', ')
}

function reasonText(reason: KeepReason): string {
  return reason.kind === 'error' ? `error: ${reason.message}` : reason.message
}

function renderSnapshots(snapshots: (SnapshotRefs & { name: string })[], dry: boolean): string[] {
  if (!snapshots.length) return []
  const lines = [
    dry
      ? 'Would store snapshots first (nothing is lost):'
      : 'Snapshots stored first (nothing is lost); to get the work back:',
  ]
  for (const s of snapshots) {
    lines.push(`  ${s.name}  ${[s.refs.branch, s.refs.worktree].filter(Boolean).join('  ')}`)
    for (const command of s.restore) lines.push(`    ${command}`)
  }
  if (snapshots.some((s) => s.refs.worktree)) {
    lines.push(
      '  (a worktree snapshot holds every file, untracked ones too, as one commit on top of the old HEAD;',
      '   "git -C <dir> reset HEAD~1" in the restored worktree makes them uncommitted changes again)',
    )
  }
  return lines
}

/** `session prune`. */
export function renderPruneReport(report: PruneReport): string {
  const lines: string[] = []
  const dry = report.dry_run
  if (dry) lines.push('Dry run: nothing was changed.')
  const what = (item: { kind: string; path: string | null; branch: string | null }) =>
    `${item.kind.padEnd(8)}  ${item.kind === 'branch' ? item.branch : item.path}`
  if (report.removed.length) {
    lines.push(`${dry ? 'Would remove' : 'Removed'}:`)
    for (const item of report.removed) lines.push(`  ${what(item)}${removedNote(item)}`)
  }
  if (report.kept.length) {
    lines.push(`${dry ? 'Would keep' : 'Kept'}:`)
    for (const item of report.kept) {
      lines.push(`  ${what(item)}`)
      for (const reason of item.reasons) lines.push(`            ${reasonText(reason)}`)
    }
    if (report.kept.some((s) => s.reasons.some((r) => r.kind === 'unsafe'))) {
      lines.push('  (--force stores a snapshot under refs/harness/<name>/ first, then removes them)')
    }
  }
  lines.push(...renderSnapshots(report.snapshots, dry))
  if (report.registrations.length) {
    lines.push(`git worktree prune${dry ? ' would drop' : ''}:`, ...report.registrations.map((l) => `  ${l}`))
  }
  if (lines.length === (dry ? 1 : 0)) lines.push('Nothing to prune.')
  return lines.join('\n')
}

function removedNote(item: PrunedItem): string {
  if (item.kind === 'worktree') return item.branch ? ` (on ${item.branch})` : ''
  if (item.kind === 'folder') return ' (empty)'
  if (item.merged_into) return ` (merged into ${item.merged_into})`
  return item.forced ? ' (unmerged, snapshot kept)' : ''
}
