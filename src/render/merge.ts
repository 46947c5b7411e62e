import { shellWord } from '../errors.js'
import type { MergeResult } from '../sessions/work/merge.js'

const HOW = { merge: 'a merge commit', squash: 'one squashed commit', rebase: 'its commits replayed' }

export function renderMerge(result: MergeResult): string {
  const into = `"${result.base_branch}" in ${result.main_worktree}`
  if (result.outcome === 'up-to-date') {
    return `session ${result.id}: nothing to merge, "${result.base_branch}" already holds branch ${result.branch}`
  }
  const lines: string[] = []
  const files = result.uncommitted.length
  // `commits` counts the commit the uncommitted work becomes; the branch itself holds the rest.
  const onBranch = result.commits - (files ? 1 : 0)
  const work = `${onBranch} ${onBranch === 1 ? 'commit' : 'commits'}`
  if (result.dry_run) {
    lines.push(
      `session ${result.id}: would land branch ${result.branch} on ${into} as ${HOW[result.strategy]}`,
    )
    if (files)
      lines.push(
        `would first commit ${files} uncommitted ${files === 1 ? 'file' : 'files'} on ${result.branch}`,
      )
    if (onBranch > 0) lines.push(`${work} on ${result.branch} to merge`)
  } else {
    lines.push(`session ${result.id}: merged branch ${result.branch} into ${into} as ${HOW[result.strategy]}`)
    if (files) lines.push(`committed ${files} uncommitted ${files === 1 ? 'file' : 'files'} first`)
    if (result.merge_commit) lines.push(`${result.base_branch} is now at ${result.merge_commit.slice(0, 12)}`)
  }
  if (result.conflicts.length) {
    lines.push('conflicts:', ...result.conflicts.map((path) => `  ${path}`))
  }
  for (const refusal of result.refusals) {
    lines.push(`refused: ${refusal.message}${refusal.hint ? ` (${refusal.hint})` : ''}`)
  }
  if (result.dry_run && result.refusals.length === 0) lines.push(`run it: ${mergeCommand(result)}`)
  return lines.join('\n')
}

/** The command the dry run stands for, with its strategy and message. */
function mergeCommand(result: MergeResult): string {
  const words = ['harness', 'session', 'merge', shellWord(result.id)]
  if (result.strategy !== 'merge') words.push(`--${result.strategy}`)
  if (result.message !== null) words.push('-m', shellWord(result.message))
  return words.join(' ')
}
