/**
 * Reading the JSON event streams that agent CLIs print in headless mode (claude `stream-json`, codex
 * `exec --json`, gemini `--output-format json|stream-json`, opencode `run --format json`, pi `--mode json`)
 * into a few kinds of entries people read, and into the run's token usage (docs/history.md).
 *
 * The format is recognised per line from the event's own shape, not from the provider's name, so a renamed or
 * user-configured provider still reads. Anything not recognised — text, malformed JSON, an event of a newer
 * version — becomes a `raw` entry that is printed as it is: reading a log never fails.
 */

import type { HeadlessOutput } from '../providers/schema.js'
import {
  claudeMessage,
  claudeSystem,
  codexError,
  codexItem,
  contentText,
  error,
  errorText,
  hasNum,
  isObj,
  type LogEntry,
  modelSuffix,
  note,
  num,
  type Obj,
  opencodeStepUsage,
  opencodeTool,
  result,
  str,
  tool,
  type Usage,
} from './event-parts.js'

export type { LogEntry, Usage } from './event-parts.js'

/** The event streams whose usage the reader knows: a provider's `headless_output`. */
export type UsageFormat = HeadlessOutput

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
  /**
   * codex's `turn.completed` usage is the thread's total so far (codex 0.171: a resumed thread's first turn
   * reports the earlier runs' tokens too): what the thread had before the last one, which each turn subtracts.
   */
  private codexSoFar: Usage
  private codexTurns = 0
  /** A claude `result` said it stopped at its `--max-budget-usd` (`error_max_budget_usd`). */
  budgetExceeded = false

  /** Whose usage counts: undefined, every format's (what `logs` shows); null, none; else that format's alone. */
  private readonly usageFormat: UsageFormat | null | undefined

  /**
   * `earlier`: the usage the session's earlier runs recorded, which a resumed codex thread's totals include;
   * none for a first run. Other formats report each run's own usage and ignore it. `usageFormat`: the
   * provider's own format, the only one whose cost and tokens a run's usage and budget take (an agent can
   * print lines of any format: docs/security.md, "Numbers from agent output"); null takes none.
   */
  constructor(options: { earlier?: Usage | null; usageFormat?: UsageFormat | null } = {}) {
    this.usageFormat = options.usageFormat
    const earlier = options.earlier
    this.codexSoFar = {
      input_tokens: earlier?.input_tokens ?? 0,
      output_tokens: earlier?.output_tokens ?? 0,
      cached_tokens: earlier?.cached_tokens ?? 0,
      cost_usd: null,
    }
  }

  /** The usage the run's events reported, summed; null when none did. */
  get usage(): Usage | null {
    const total = this.total
    if (!total) return null
    // Sums of many small costs pick up float noise (0.0031 + 0.0012); a millionth of a dollar is plenty.
    return { ...total, cost_usd: total.cost_usd === null ? null : Math.round(total.cost_usd * 1e6) / 1e6 }
  }

  /** codex's thread totals as of the last turn read (else as given): the `earlier` of the run that follows. */
  get codexThread(): Usage {
    return { ...this.codexSoFar }
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

  private addUsage(usage: Usage, format: UsageFormat): LogEntry[] {
    if (!this.counts(format)) return []
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

  private counts(format: UsageFormat): boolean {
    return this.usageFormat === undefined || this.usageFormat === format
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

  /** An event with a `type`: each format's reader in turn (their types do not overlap); null: none knows it. */
  private typed(type: string, event: Obj): LogEntry[] | null {
    return (
      this.claudeEvent(type, event) ??
      this.codexEvent(type, event) ??
      this.geminiOrOpencodeEvent(type, event) ??
      this.piEvent(type, event) ??
      null
    )
  }

  /** claude stream-json. Undefined: not one of its types. */
  private claudeEvent(type: string, event: Obj): LogEntry[] | null | undefined {
    switch (type) {
      case 'system':
        return claudeSystem(event)
      case 'assistant':
      case 'user':
        return isObj(event.message) ? claudeMessage(event.message) : null
      case 'result':
        if ('stats' in event || 'status' in event) return this.geminiResult(event)
        return this.claudeResult(event)
      case 'stream_event':
        return []
      default:
        return undefined
    }
  }

  /** codex exec --json. */
  private codexEvent(type: string, event: Obj): LogEntry[] | null | undefined {
    switch (type) {
      case 'thread.started':
        return [note(`thread ${str(event.thread_id) ?? '?'}`)]
      case 'turn.started':
      case 'item.updated':
      case 'item.plan.delta':
        return []
      case 'turn.completed':
        return this.codexTurn(isObj(event.usage) ? event.usage : {})
      case 'turn.failed':
        return [error(errorText(event.error))]
      case 'item.started':
      case 'item.completed':
        return isObj(event.item) ? codexItem(event.item, type === 'item.completed') : null
      case 'request_user_input':
        return [note('the agent asked for input')]
      case 'error':
        return codexError(event)
      default:
        return undefined
    }
  }

  /** gemini stream-json, and opencode run --format json. */
  private geminiOrOpencodeEvent(type: string, event: Obj): LogEntry[] | null | undefined {
    switch (type) {
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
      case 'step_start':
      case 'done':
        return []
      case 'text':
        return isObj(event.part) ? [{ kind: 'message', text: str(event.part.text) ?? '' }] : null
      case 'reasoning':
        return isObj(event.part) ? [{ kind: 'thinking', text: str(event.part.text) ?? '' }] : null
      case 'step_finish': {
        const usage = opencodeStepUsage(event)
        return usage ? this.addUsage(usage, 'opencode-json') : []
      }
      default:
        return undefined
    }
  }

  /** pi --mode json. */
  private piEvent(type: string, event: Obj): LogEntry[] | null | undefined {
    switch (type) {
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
        return undefined
    }
  }

  /** A codex turn's usage: the thread's totals, of which this run's are what grew since the thread's last. */
  private codexTurn(u: Obj): LogEntry[] {
    const now: Usage = {
      input_tokens: num(u.input_tokens),
      output_tokens: num(u.output_tokens),
      cached_tokens: num(u.cached_input_tokens),
      cost_usd: null,
    }
    const add = (a: number | null, b: number | null) => (a ?? 0) + (b ?? 0)
    if (this.codexTurns++ > 0) {
      // A later turn of the same `exec` adds its own figures (one turn per exec in 0.171; summed as before).
      const t = this.codexSoFar
      this.codexSoFar = {
        input_tokens: add(t.input_tokens, now.input_tokens),
        output_tokens: add(t.output_tokens, now.output_tokens),
        cached_tokens: add(t.cached_tokens, now.cached_tokens),
        cost_usd: null,
      }
      return this.addUsage(now, 'codex-json')
    }
    // The run's first turn: the thread's total, the earlier runs' included. Totals below what the session had:
    // not that thread (a resume that began a new one), so all its own.
    const before = num(now.input_tokens) < num(this.codexSoFar.input_tokens) ? null : this.codexSoFar
    const grew = (a: number | null, b: number | null) => (a === null ? null : Math.max(0, a - (b ?? 0)))
    this.codexSoFar = now
    return this.addUsage(
      {
        input_tokens: grew(now.input_tokens, before?.input_tokens ?? 0),
        output_tokens: grew(now.output_tokens, before?.output_tokens ?? 0),
        cached_tokens: grew(now.cached_tokens, before?.cached_tokens ?? 0),
        cost_usd: null,
      },
      'codex-json',
    )
  }

  private claudeResult(event: Obj): LogEntry[] {
    const entries: LogEntry[] = []
    if (event.subtype === 'error_max_budget_usd' && this.counts('claude-stream-json'))
      this.budgetExceeded = true
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
      ...this.addUsage(
        {
          input_tokens: grew(now.input_tokens, before.input_tokens),
          output_tokens: grew(now.output_tokens, before.output_tokens),
          cached_tokens: grew(now.cached_tokens, before.cached_tokens),
          cost_usd: grew(now.cost_usd, before.cost_usd),
        },
        'claude-stream-json',
      ),
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
        ...this.addUsage(
          {
            input_tokens: num(stats.input_tokens),
            output_tokens: num(stats.output_tokens),
            cached_tokens: num(stats.cached),
            cost_usd: null,
          },
          'gemini-json',
        ),
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
      entries.push(...this.addUsage(usage, 'gemini-json'))
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
        ...this.addUsage(
          {
            input_tokens: num(u.input) + num(u.cacheRead) + num(u.cacheWrite),
            output_tokens: num(u.output),
            cached_tokens: num(u.cacheRead),
            cost_usd: cost && hasNum(cost.total) ? num(cost.total) : null,
          },
          'pi-json',
        ),
      )
    }
    return entries
  }
}
