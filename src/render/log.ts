import type { LogEntry, Usage } from '../history/events.js'
import { type Colour, paint } from './text.js'

const RESULT_LINES = 3
const LINE_WIDTH = 160

/** Control characters of one-line summaries (tool arguments, results) as visible escapes. */
export function escapeControls(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    const code = c.charCodeAt(0)
    return `\\x${code.toString(16).padStart(2, '0')}`
  })
}

function oneLine(text: string, width = LINE_WIDTH): string {
  const flat = escapeControls(text.replace(/\s+/g, ' ').trim())
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`

export function formatUsage(usage: Usage): string {
  const parts: string[] = []
  if (usage.input_tokens !== null) {
    const cached = usage.cached_tokens ? ` (${usage.cached_tokens.toLocaleString('en-US')} cached)` : ''
    parts.push(`${usage.input_tokens.toLocaleString('en-US')} in${cached}`)
  }
  if (usage.output_tokens !== null) parts.push(`${usage.output_tokens.toLocaleString('en-US')} out`)
  if (usage.cost_usd !== null) parts.push(formatCost(usage.cost_usd))
  return parts.join(', ')
}

export function formatCost(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`
}

/** One entry as lines of text; a message keeps its own lines, everything else is summarised on one or a few. */
export function renderLogEntry(entry: LogEntry, color = false): string[] {
  const dim = (text: string, colour: Colour = 'gray') => paint(text, colour, color)
  switch (entry.kind) {
    case 'raw':
      return [entry.text]
    case 'message':
      return entry.text.trim() ? entry.text.replace(/\s+$/, '').split('\n') : []
    case 'thinking':
      return entry.text.trim() ? [dim(`(thinking) ${oneLine(entry.text)}`)] : []
    case 'tool':
      return [
        paint(`→ ${oneLine(entry.name, 60)}`, 'cyan', color) +
          (entry.detail ? `(${oneLine(entry.detail)})` : ''),
      ]
    case 'result': {
      const lines = entry.text.split('\n').filter((line) => line.trim() !== '')
      const mark = entry.error ? paint('  ✗ ', 'red', color) : '  ← '
      if (lines.length === 0) return entry.error ? [`${mark}failed`] : []
      const shown = lines
        .slice(0, RESULT_LINES)
        .map((line, i) => `${i === 0 ? mark : '    '}${oneLine(line)}`)
      if (lines.length > RESULT_LINES)
        shown.push(dim(`    … ${plural(lines.length - RESULT_LINES, 'more line')}`))
      return shown
    }
    case 'error':
      return [paint(`error: ${oneLine(entry.text, 1000)}`, 'red', color)]
    case 'note':
      return [dim(`· ${oneLine(entry.text)}`)]
    case 'usage':
      return [dim(`· usage: ${formatUsage(entry.usage)}`)]
  }
}

export interface RunHeader {
  n: number
  kind: string
  started_at: string
}

export function renderRunHeader(run: RunHeader, color = false): string {
  return paint(`── run ${run.n} · ${run.kind} · ${run.started_at} ──`, 'bold', color)
}
