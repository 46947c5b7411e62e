import { DEFAULT_CONTEXT_MAX_BYTES, type HarnessConfig } from '../../config.js'
import { entryExists, openRead, readBytesAt } from '../../disk/door.js'
import { HarnessError } from '../../errors.js'
import { EventReader, type LogEntry } from '../../history/events.js'
import { logPathFor } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import { getSession, withFullPrompt } from '../query/query.js'
import { assertSealed } from '../record/seal.js'
import { diffSession } from '../work/diff.js'

/** What `run --context-from <id>` tells the next agent about one earlier session (docs/continuity.md). */
export interface ContextSource {
  id: string
  task: string | null
  status: string
  exit_code: number | null
  branch: string | null
  files: string[]
  /** `git diff --stat` against its base ('' when unknown). */
  stat: string
  checkpoints: string[]
  /** The agent's last message or result in the log of its last run, when the log holds one. */
  final_message: string | null
}

/** How much of a run's log is read for its final message (the end of it). */
const LOG_TAIL_BYTES = 2 * 1024 * 1024

/** Reads what the block says about each session (each at most once, in the order given). */
export async function gatherContext(ctx: SessionEnv, inputs: readonly string[]): Promise<ContextSource[]> {
  const sources: ContextSource[] = []
  const seen = new Set<string>()
  const paths = await ctx.project()
  for (const input of inputs) {
    const found = await getSession(ctx, input)
    if (seen.has(found.id)) continue
    seen.add(found.id)
    // A record harness did not seal may come from anyone: its text never reaches an agent's prompt.
    assertSealed(found)
    const session = await withFullPrompt(ctx, found)
    let files = session.files_modified ?? []
    let stat = ''
    try {
      const diff = await diffSession(ctx, session.id, 'stat')
      files = diff.files
      stat = diff.stat ?? ''
    } catch (error) {
      // No base commit, or worktree and branch gone: the recorded file list is all there is.
      if (!(error instanceof HarnessError)) throw error
    }
    const lastRun = session.runs?.[session.runs.length - 1]
    sources.push({
      id: session.id,
      // An `exec` session's task is its command.
      task: session.prompt ?? (Array.isArray(session.extra_args) ? session.extra_args.join(' ') : null),
      status: session.status,
      exit_code: session.exit_code ?? null,
      branch: session.git_branch ?? null,
      files,
      stat: stat.trimEnd(),
      checkpoints: (session.checkpoints ?? []).map(
        (c) => `#${c.n} ${c.trigger ?? ''}: ${(c.message ?? '').replace(/\s+/g, ' ').trim()}`,
      ),
      final_message: await finalMessage(logPathFor(paths.logsDir, session.id), lastRun?.log_offset ?? 0),
    })
  }
  return sources
}

/** The last result (else the last assistant message) of the agent's event stream from `offset` on. */
async function finalMessage(logPath: string, offset: number): Promise<string | null> {
  if (!entryExists(logPath)) return null
  // No-follow and type-checked: a log replaced by a link or a FIFO is refused, never read or waited on.
  const { fd, size } = openRead(logPath)
  const start = Math.max(offset, size - LOG_TAIL_BYTES, 0)
  const text = readBytesAt(fd, Math.max(size - start, 0), start, true).toString('utf8')
  const reader = new EventReader()
  let result: string | null = null
  let message: string | null = null
  const take = (entries: LogEntry[]) => {
    for (const entry of entries) {
      if (entry.kind === 'result' && !entry.error && entry.text.trim()) result = entry.text.trim()
      else if (entry.kind === 'message' && entry.text.trim()) message = entry.text.trim()
    }
  }
  for (const line of text.split('\n')) take(reader.push(line))
  take(reader.end())
  return result ?? message
}

export function contextMaxBytes(config: HarnessConfig): number {
  return config.context?.max_bytes ?? DEFAULT_CONTEXT_MAX_BYTES
}

interface Section {
  /** Lower is kept longer: trimming starts with the highest. */
  rank: number
  title: string
  lines: string[]
  /** Lines dropped from the end. */
  dropped: number
  /** Left out whole, title too (when no cut of its lines makes the block fit). */
  removed: boolean
}

const RANK = { task: 0, final: 1, files: 2, checkpoints: 3, stat: 4 } as const
const INDENT = '  '
const HEAD = 'Context from earlier harness sessions (their work is on the branches named below):'
const TAIL = '--- end of context; the task follows ---'
const TRIMMED_TAIL = '--- end of context (trimmed to fit); the task follows ---'
const CUT = '[… trimmed]'

/**
 * The block put before the prompt: per session its task, status and exit code, branch, files changed, diff
 * stat, checkpoint messages and final message. Over `maxBytes` it is trimmed from the least important part
 * first (diff stat, then checkpoint messages, files, final message), line by line from the end, each cut said
 * where it was made; a part that no cut of its lines makes fit is left out whole, so a marker never takes more
 * room than what it stands for, and the end line then says the block was trimmed. A task loses lines only when
 * everything else is gone, and keeps its first line. Only when even that does not fit is the text between
 * the first line and the end line cut; both stay whole. Pure: tested directly.
 */
export function buildContextBlock(sources: readonly ContextSource[], maxBytes: number): string {
  if (sources.length === 0) return ''
  const blocks = sources.map((source) => ({
    header: `## Session ${source.id}: ${source.status}${source.exit_code === null ? '' : ` (exit ${source.exit_code})`}${source.branch ? `, branch ${source.branch}` : ''}`,
    sections: sectionsOf(source),
  }))
  const body = () => blocks.flatMap((block) => ['', block.header, ...block.sections.flatMap(renderSection)])
  const full = [HEAD, ...body(), '', TAIL].join('\n')
  if (bytes(full) <= maxBytes) return full
  const render = () => [HEAD, ...body(), '', TRIMMED_TAIL].join('\n')
  const fits = () => bytes(render()) <= maxBytes
  const all = blocks.flatMap((block) => block.sections)
  const byRank = [...all].sort((a, b) => b.rank - a.rank)
  for (const section of byRank) {
    if (fits()) return render()
    // A task keeps its first line; any other part may lose all of its lines, then itself.
    const most = section.rank === RANK.task ? section.lines.length - 1 : section.lines.length
    // The fewest lines to drop from this section's end (the size shrinks as more go): a binary search.
    let low = 1
    let high = most + 1
    while (low < high) {
      const mid = (low + high) >> 1
      section.dropped = mid
      if (fits()) high = mid
      else low = mid + 1
    }
    if (low <= most) {
      section.dropped = low
      return render()
    }
    // No cut fits: the most this part can give.
    section.dropped = most
    if (section.rank !== RANK.task) {
      section.dropped = 0
      section.removed = true
    }
  }
  if (fits()) return render()
  // Even the headers and first lines do not fit: cut the text between the first and the end line.
  const ending = `\n${CUT}\n\n${TRIMMED_TAIL}`
  const middle = body().join('\n')
  return `${HEAD}${truncateBytes(middle, maxBytes - bytes(HEAD) - bytes(ending))}${ending}`
}

function bytes(text: string): number {
  return Buffer.byteLength(text)
}

function sectionsOf(source: ContextSource): Section[] {
  const sections: Section[] = []
  const add = (rank: number, title: string, lines: string[]) => {
    if (lines.length) sections.push({ rank, title, lines, dropped: 0, removed: false })
  }
  add(RANK.task, 'Task:', source.task?.trim() ? source.task.trim().split('\n') : [])
  add(RANK.files, `Files changed (${source.files.length}):`, source.files)
  add(RANK.stat, 'Diff stat against its base:', source.stat ? source.stat.split('\n') : [])
  add(RANK.checkpoints, 'Checkpoints:', source.checkpoints)
  add(RANK.final, "The agent's final message:", source.final_message ? source.final_message.split('\n') : [])
  return sections
}

function renderSection(section: Section): string[] {
  if (section.removed) return []
  const kept = section.lines.slice(0, section.lines.length - section.dropped)
  const n = section.dropped
  const cut = n ? [`${INDENT}[… ${n} more ${n === 1 ? 'line' : 'lines'} trimmed]`] : []
  return [section.title, ...kept.map((line) => INDENT + line), ...cut]
}

/** The first `maxBytes` bytes of `text`, on a character boundary. */
function truncateBytes(text: string, maxBytes: number): string {
  const cut = Buffer.from(text).subarray(0, Math.max(0, maxBytes)).toString('utf8')
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  return cut.replace(/\uFFFD+$/, '')
}

/** The prompt the agent gets: the context block, then the task. */
export function promptWithContext(block: string, prompt: string | undefined): string | undefined {
  if (!block) return prompt
  return prompt ? `${block}\n\n${prompt}` : block
}
