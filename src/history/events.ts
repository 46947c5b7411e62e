/**
 * Reading the JSON event streams that agent CLIs print in headless mode (claude `stream-json`, codex
 * `exec --json`, gemini `--output-format json|stream-json`, opencode `run --format json`, pi `--mode json`)
 * into a few kinds of entries people read, and into the run's token usage (docs/history.md).
 *
 * The format is recognised per line from the event's own shape, not from the provider's name, so a renamed or
 * user-configured provider still reads. Anything not recognised — text, malformed JSON, an event of a newer
 * version — becomes a `raw` entry that is printed as it is: reading a log never fails.
 */

export interface Usage {
  /** Every input token, cached ones included. */
  input_tokens: number | null
  output_tokens: number | null
  /** The part of the input tokens read from the provider's cache. */
  cached_tokens: number | null
  /** What the provider itself said the run cost; never estimated from a price list. */
  cost_usd: number | null
}

export type LogEntry =
  | { kind: 'raw'; text: string }
  | { kind: 'message'; text: string }
  | { kind: 'thinking'; text: string }
  | { kind: 'tool'; name: string; detail: string }
  | { kind: 'result'; text: string; error: boolean }
  | { kind: 'error'; text: string }
  | { kind: 'note'; text: string }
  | { kind: 'usage'; usage: Usage }

type Obj = Record<string, unknown>

const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0)
const hasNum = (value: unknown): boolean => typeof value === 'number' && Number.isFinite(value)

/** A pretty-printed document (gemini's `json` format) is gathered up to this size, then given up as text. */
const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024

/**
 * Reads one run's output line by line. `push` takes each complete line (without its newline) and returns what
 * to show; `end` returns what was held back (a multi-line document that never closed, streamed text).
 */
export class EventReader {
  private document: string[] | null = null
  private documentBytes = 0
  private deltaText = ''
  private total: Usage | null = null
  private ended = false
  /** claude's `result` events carry the process's running totals: what the last one said. */
  private claudeSoFar: Usage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 }
  /** A claude `result` said it stopped at its `--max-budget-usd` (`error_max_budget_usd`). */
  budgetExceeded = false

  /** The usage the run's events reported, summed; null when none did. */
  get usage(): Usage | null {
    const total = this.total
    if (!total) return null
    // Sums of many small costs pick up float noise (0.0031 + 0.0012); a millionth of a dollar is plenty.
    return { ...total, cost_usd: total.cost_usd === null ? null : Math.round(total.cost_usd * 1e6) / 1e6 }
  }

  push(line: string): LogEntry[] {
    if (this.document) return this.continueDocument(line)
    const text = line.trim()
    if (text === '{') {
      this.document = [line]
      this.documentBytes = line.length
      return []
    }
    if (!text.startsWith('{') || !text.endsWith('}'))
      return [...this.flushDelta(), { kind: 'raw', text: line }]
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return [...this.flushDelta(), { kind: 'raw', text: line }]
    }
    return this.interpretOrRaw(value, [line])
  }

  end(): LogEntry[] {
    const held = this.document ? this.document.map((text): LogEntry => ({ kind: 'raw', text })) : []
    this.document = null
    // Usage is shown once per run, summed, rather than after every step that reported some.
    const total = this.usage
    const usage: LogEntry[] = total && !this.ended ? [{ kind: 'usage', usage: total }] : []
    this.ended = true
    return [...this.flushDelta(), ...held, ...usage]
  }

  private continueDocument(line: string): LogEntry[] {
    const lines = this.document as string[]
    lines.push(line)
    this.documentBytes += line.length + 1
    // A document printed with JSON.stringify(value, null, 2) closes with "}" alone at the start of a line.
    if (line.trimEnd() === '}') {
      this.document = null
      let value: unknown
      try {
        value = JSON.parse(lines.join('\n'))
      } catch {
        return lines.map((text) => ({ kind: 'raw', text }))
      }
      return this.interpretOrRaw(value, lines)
    }
    if (this.documentBytes > MAX_DOCUMENT_BYTES) {
      this.document = null
      return lines.map((text) => ({ kind: 'raw', text }))
    }
    return []
  }

  private interpretOrRaw(value: unknown, lines: string[]): LogEntry[] {
    let entries: LogEntry[] | null = null
    try {
      entries = isObj(value) ? this.interpret(value) : null
    } catch {
      entries = null // an event of a shape no parser expected is shown as written
    }
    if (entries === null)
      return [...this.flushDelta(), ...lines.map((text): LogEntry => ({ kind: 'raw', text }))]
    return entries
  }

  private addUsage(usage: Usage): LogEntry[] {
    const add = (a: number | null, b: number | null) =>
      a === null && b === null ? null : (a ?? 0) + (b ?? 0)
    const total = this.total
    this.total = total
      ? {
          input_tokens: add(total.input_tokens, usage.input_tokens),
          output_tokens: add(total.output_tokens, usage.output_tokens),
          cached_tokens: add(total.cached_tokens, usage.cached_tokens),
          cost_usd: add(total.cost_usd, usage.cost_usd),
        }
      : usage
    return []
  }

  private flushDelta(): LogEntry[] {
    if (!this.deltaText) return []
    const text = this.deltaText
    this.deltaText = ''
    return [{ kind: 'message', text }]
  }

  /** The entries of one event, or null when no known format has an event of this shape. */
  private interpret(event: Obj): LogEntry[] | null {
    const type = str(event.type)
    // gemini stream-json sends the assistant's text in pieces; they are shown as one message.
    if (type === 'message' && event.delta === true && event.role === 'assistant' && 'timestamp' in event) {
      this.deltaText += str(event.content) ?? ''
      return []
    }
    const before = this.flushDelta()
    const entries = type === undefined ? this.geminiDocument(event) : this.typed(type, event)
    return entries === null ? null : [...before, ...entries]
  }

  private typed(type: string, event: Obj): LogEntry[] | null {
    switch (type) {
      // claude stream-json
      case 'system':
        if (event.subtype === 'init')
          return [note(`session ${str(event.session_id) ?? '?'}${modelSuffix(event.model)}`)]
        return []
      case 'assistant':
      case 'user':
        return isObj(event.message) ? claudeMessage(event.message) : null
      case 'result':
        if ('stats' in event || 'status' in event) return this.geminiResult(event)
        return this.claudeResult(event)
      case 'stream_event':
        return []
      // codex exec --json
      case 'thread.started':
        return [note(`thread ${str(event.thread_id) ?? '?'}`)]
      case 'turn.started':
      case 'item.updated':
      case 'item.plan.delta':
        return []
      case 'turn.completed': {
        const u = isObj(event.usage) ? event.usage : {}
        return this.addUsage({
          input_tokens: num(u.input_tokens),
          output_tokens: num(u.output_tokens),
          cached_tokens: num(u.cached_input_tokens),
          cost_usd: null,
        })
      }
      case 'turn.failed':
        return [error(errorText(event.error))]
      case 'item.started':
      case 'item.completed':
        return isObj(event.item) ? codexItem(event.item, type === 'item.completed') : null
      case 'request_user_input':
        return [note('the agent asked for input')]
      case 'error':
        if (event.severity === 'warning') return [note(`warning: ${errorText(event)}`)]
        return [error(errorText(event))]
      // gemini stream-json
      case 'init':
        return [note(`session ${str(event.session_id) ?? '?'}${modelSuffix(event.model)}`)]
      case 'message':
        if (event.role === 'assistant') return [{ kind: 'message', text: str(event.content) ?? '' }]
        return []
      case 'tool_use':
        if (isObj(event.part)) return opencodeTool(event.part)
        return [tool(str(event.tool_name) ?? '?', event.parameters)]
      case 'tool_result':
        return [
          result(
            str(event.output) ?? (isObj(event.error) ? (str(event.error.message) ?? '') : ''),
            event.status === 'error',
          ),
        ]
      // opencode run --format json
      case 'step_start':
      case 'done':
        return []
      case 'text':
        return isObj(event.part) ? [{ kind: 'message', text: str(event.part.text) ?? '' }] : null
      case 'reasoning':
        return isObj(event.part) ? [{ kind: 'thinking', text: str(event.part.text) ?? '' }] : null
      case 'step_finish': {
        const part = isObj(event.part) ? event.part : {}
        const tokens = isObj(part.tokens) ? part.tokens : null
        if (!tokens) return []
        const cache = isObj(tokens.cache) ? tokens.cache : {}
        return this.addUsage({
          input_tokens: num(tokens.input) + num(cache.read) + num(cache.write),
          output_tokens: num(tokens.output) + num(tokens.reasoning),
          cached_tokens: num(cache.read),
          cost_usd: hasNum(part.cost) ? num(part.cost) : null,
        })
      }
      // pi --mode json
      case 'session':
        return [note(`session ${str(event.id) ?? '?'}`)]
      case 'agent_start':
      case 'agent_end':
      case 'turn_start':
      case 'turn_end':
      case 'message_start':
      case 'message_update':
      case 'tool_execution_update':
      case 'auto_compaction_end':
      case 'auto_retry_end':
        return []
      case 'message_end':
        return isObj(event.message) ? this.piMessage(event.message) : null
      case 'tool_execution_start':
        return [tool(str(event.toolName) ?? '?', event.args)]
      case 'tool_execution_end':
        return [
          result(
            contentText(isObj(event.result) ? event.result.content : event.result),
            event.isError === true,
          ),
        ]
      case 'auto_compaction_start':
        return [note('compacting the conversation')]
      case 'auto_retry_start':
        return [note(`retrying (attempt ${num(event.attempt)}): ${str(event.errorMessage) ?? ''}`)]
      default:
        return null
    }
  }

  private claudeResult(event: Obj): LogEntry[] {
    const entries: LogEntry[] = []
    if (event.subtype === 'error_max_budget_usd') this.budgetExceeded = true
    if (event.is_error === true || (typeof event.subtype === 'string' && event.subtype !== 'success')) {
      entries.push(error(str(event.result) ?? str(event.subtype) ?? 'the run failed'))
    }
    const u = isObj(event.usage) ? event.usage : null
    const cost = hasNum(event.total_cost_usd) ? num(event.total_cost_usd) : null
    if (!u && cost === null) return entries
    // `usage` and `total_cost_usd` are totals of the claude process so far (one result per turn when it is fed
    // several): each result adds what grew since the one before.
    const cacheRead = u ? num(u.cache_read_input_tokens) : 0
    const now: Usage = {
      input_tokens: u ? num(u.input_tokens) + num(u.cache_creation_input_tokens) + cacheRead : null,
      output_tokens: u ? num(u.output_tokens) : null,
      cached_tokens: u ? cacheRead : null,
      cost_usd: cost,
    }
    const before = this.claudeSoFar
    const grew = (a: number | null, b: number | null) => (a === null ? null : Math.max(0, a - (b ?? 0)))
    const most = (a: number | null, b: number | null) => Math.max(a ?? 0, b ?? 0)
    entries.push(
      ...this.addUsage({
        input_tokens: grew(now.input_tokens, before.input_tokens),
        output_tokens: grew(now.output_tokens, before.output_tokens),
        cached_tokens: grew(now.cached_tokens, before.cached_tokens),
        cost_usd: grew(now.cost_usd, before.cost_usd),
      }),
    )
    this.claudeSoFar = {
      input_tokens: most(now.input_tokens, before.input_tokens),
      output_tokens: most(now.output_tokens, before.output_tokens),
      cached_tokens: most(now.cached_tokens, before.cached_tokens),
      cost_usd: most(now.cost_usd, before.cost_usd),
    }
    return entries
  }

  private geminiResult(event: Obj): LogEntry[] {
    const entries: LogEntry[] = []
    if (event.status === 'error') entries.push(error(errorText(event.error)))
    const stats = isObj(event.stats) ? event.stats : null
    if (stats) {
      entries.push(
        ...this.addUsage({
          input_tokens: num(stats.input_tokens),
          output_tokens: num(stats.output_tokens),
          cached_tokens: num(stats.cached),
          cost_usd: null,
        }),
      )
    }
    return entries
  }

  /** gemini `--output-format json`: one document with `response`, `stats` and `error`, and no `type`. */
  private geminiDocument(doc: Obj): LogEntry[] | null {
    if (!('response' in doc || 'stats' in doc || 'error' in doc)) return null
    const entries: LogEntry[] = []
    if (typeof doc.session_id === 'string') entries.push(note(`session ${doc.session_id}`))
    if (typeof doc.response === 'string') entries.push({ kind: 'message', text: doc.response })
    if (doc.error !== undefined && doc.error !== null) entries.push(error(errorText(doc.error)))
    const models = isObj(doc.stats) && isObj(doc.stats.models) ? doc.stats.models : null
    if (models) {
      const usage: Usage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: null }
      for (const model of Object.values(models)) {
        const tokens = isObj(model) && isObj(model.tokens) ? model.tokens : {}
        usage.input_tokens = (usage.input_tokens ?? 0) + num(tokens.prompt)
        usage.output_tokens = (usage.output_tokens ?? 0) + num(tokens.candidates) + num(tokens.thoughts)
        usage.cached_tokens = (usage.cached_tokens ?? 0) + num(tokens.cached)
      }
      entries.push(...this.addUsage(usage))
    }
    return entries
  }

  private piMessage(message: Obj): LogEntry[] {
    if (message.role !== 'assistant') return [] // tool results are shown from tool_execution_end
    const entries: LogEntry[] = []
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (!isObj(block)) continue
      if (block.type === 'text') entries.push({ kind: 'message', text: str(block.text) ?? '' })
      else if (block.type === 'thinking') entries.push({ kind: 'thinking', text: str(block.thinking) ?? '' })
    }
    if (typeof message.errorMessage === 'string' && message.errorMessage)
      entries.push(error(message.errorMessage))
    const u = isObj(message.usage) ? message.usage : null
    if (u) {
      const cost = isObj(u.cost) ? u.cost : null
      entries.push(
        ...this.addUsage({
          input_tokens: num(u.input) + num(u.cacheRead) + num(u.cacheWrite),
          output_tokens: num(u.output),
          cached_tokens: num(u.cacheRead),
          cost_usd: cost && hasNum(cost.total) ? num(cost.total) : null,
        }),
      )
    }
    return entries
  }
}

const note = (text: string): LogEntry => ({ kind: 'note', text })
const error = (text: string): LogEntry => ({ kind: 'error', text })
const result = (text: string, isError: boolean): LogEntry => ({ kind: 'result', text, error: isError })
const tool = (name: string, input: unknown): LogEntry => ({
  kind: 'tool',
  name,
  detail: shortArgument(input),
})
const modelSuffix = (model: unknown) => (typeof model === 'string' && model ? ` (${model})` : '')

function errorText(value: unknown): string {
  if (typeof value === 'string') return value
  if (!isObj(value)) return 'error'
  if (typeof value.message === 'string') return value.message
  if (isObj(value.data) && typeof value.data.message === 'string') return value.data.message
  if (isObj(value.error)) return errorText(value.error)
  return str(value.name) ?? str(value.type) ?? JSON.stringify(value)
}

/** The argument that says most about a tool call: its command, path, pattern or query; else its JSON. */
export function shortArgument(input: unknown): string {
  if (typeof input === 'string') return input
  if (!isObj(input)) return input === undefined || input === null ? '' : JSON.stringify(input)
  for (const key of [
    'command',
    'cmd',
    'file_path',
    'filePath',
    'path',
    'pattern',
    'query',
    'url',
    'description',
  ]) {
    const value = input[key]
    if (typeof value === 'string' && value) return value
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(' ')
  }
  return JSON.stringify(input)
}

/** Text of a tool result: a string, or content blocks (`[{type: "text", text}]`), or JSON. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((block) => (isObj(block) && typeof block.text === 'string' ? block.text : ''))
      .filter(Boolean)
      .join('\n')
  }
  return content === undefined || content === null ? '' : JSON.stringify(content)
}

function claudeMessage(message: Obj): LogEntry[] {
  const content = message.content
  if (typeof content === 'string')
    return message.role === 'assistant' ? [{ kind: 'message', text: content }] : []
  const entries: LogEntry[] = []
  for (const block of Array.isArray(content) ? content : []) {
    if (!isObj(block)) continue
    switch (block.type) {
      case 'text':
        if (message.role === 'assistant') entries.push({ kind: 'message', text: str(block.text) ?? '' })
        break
      case 'thinking':
        entries.push({ kind: 'thinking', text: str(block.thinking) ?? '' })
        break
      case 'tool_use':
        entries.push(tool(str(block.name) ?? '?', block.input))
        break
      case 'tool_result':
        entries.push(result(contentText(block.content), block.is_error === true))
        break
    }
  }
  return entries
}

function codexItem(item: Obj, completed: boolean): LogEntry[] {
  switch (item.type) {
    case 'agent_message':
      return completed ? [{ kind: 'message', text: str(item.text) ?? '' }] : []
    case 'reasoning':
      return completed ? [{ kind: 'thinking', text: str(item.text) ?? '' }] : []
    case 'plan':
      return completed ? [note(`plan: ${str(item.text) ?? ''}`)] : []
    case 'command_execution':
      if (!completed) return [tool('shell', item.command)]
      return [
        result(
          str(item.aggregated_output) ?? '',
          item.status === 'failed' || (typeof item.exit_code === 'number' && item.exit_code !== 0),
        ),
      ]
    case 'file_change': {
      if (!completed) return []
      const changes = Array.isArray(item.changes) ? item.changes : []
      const paths = changes.map((c) => (isObj(c) ? `${str(c.kind) ?? ''} ${str(c.path) ?? ''}`.trim() : ''))
      return [tool('edit', paths.join(', ')), ...(item.status === 'failed' ? [result('failed', true)] : [])]
    }
    case 'mcp_tool_call':
      if (!completed) return [tool(`${str(item.server) ?? '?'}.${str(item.tool) ?? '?'}`, item.arguments)]
      if (isObj(item.error)) return [result(errorText(item.error), true)]
      return [result(contentText(isObj(item.result) ? item.result.content : ''), item.status === 'failed')]
    case 'web_search':
      return completed ? [] : [tool('web_search', item.query)]
    case 'todo_list': {
      if (!completed) return []
      const items = Array.isArray(item.items) ? item.items : []
      const done = items.filter((i) => isObj(i) && i.completed === true).length
      return [note(`to-do list: ${done}/${items.length} done`)]
    }
    case 'error':
      return [error(str(item.message) ?? 'error')]
    default:
      return completed ? [note(`${String(item.type)}`)] : []
  }
}

function opencodeTool(part: Obj): LogEntry[] {
  const state = isObj(part.state) ? part.state : {}
  const failed = state.status === 'error'
  return [
    tool(str(part.tool) ?? '?', state.input),
    result(failed ? (str(state.error) ?? 'failed') : (str(state.output) ?? ''), failed),
  ]
}
