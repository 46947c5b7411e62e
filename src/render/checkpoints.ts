import type { Checkpoint } from '../sessions/record/schema.js'
import type { CheckpointList, RestoreOutcome, TakenCheckpoint } from '../sessions/work/checkpoints.js'
import { type Column, renderTable } from './table.js'
import { plural } from './text.js'
import { relativeTime } from './time.js'

export function renderCheckpointTaken(result: TakenCheckpoint): string {
  const c = result.checkpoint
  if (!c) return `session ${result.id}: nothing changed since the last checkpoint`
  return [
    `checkpoint ${c.n} of session ${result.id}: ${c.commit.slice(0, 12)} (${plural(c.files_changed ?? 0, 'file')} changed)`,
    `restore it with: harness session restore ${result.id} ${c.n}`,
  ].join('\n')
}

export function renderCheckpointList(
  list: CheckpointList,
  options: { width?: number; now?: Date } = {},
): string {
  if (list.checkpoints.length === 0) {
    return `Session ${list.id} has no checkpoints (take one: harness session checkpoint ${list.id} -m "…").`
  }
  const now = options.now ?? new Date()
  const columns: Column<Checkpoint>[] = [
    { header: 'N', value: (c) => String(c.n) },
    { header: 'TIME', value: (c) => relativeTime(c.created_at, now) },
    { header: 'TRIGGER', value: (c) => c.trigger ?? '-' },
    { header: 'FILES', value: (c) => (c.files_changed == null ? '-' : String(c.files_changed)) },
    { header: 'COMMIT', value: (c) => c.commit.slice(0, 12), drop: 1 },
    {
      header: 'MESSAGE',
      value: (c) => (c.message ?? '').replace(/\s+/g, ' ').trim() || '-',
      shrink: 1,
      min: 8,
    },
  ]
  return renderTable(columns, list.checkpoints, options.width)
}

export function renderRestore(result: RestoreOutcome): string {
  const lines = [
    `session ${result.id}: restored checkpoint ${result.restored.n} (${result.restored.message ?? ''})`,
  ]
  if (result.head) lines.push(`branch at ${result.head.slice(0, 12)}`)
  if (result.removed.length) lines.push(`removed ${plural(result.removed.length, 'file')} made after it`)
  if (result.kept.length) lines.push(`left alone: ${result.kept.join(', ')}`)
  if (result.before) {
    lines.push(`undo with: harness session restore ${result.id} ${result.before.n}`)
  }
  return lines.join('\n')
}
