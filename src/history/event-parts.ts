/**
 * The pieces the event reader (events.ts) builds its entries from: the entry types, the small constructors,
 * and the readers of one block, item or part of each CLI's events. Pure functions of one value each.
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

export type Obj = Record<string, unknown>

export const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
/**
 * A count or an amount from an agent's output: finite and not negative, else nothing (what an agent prints is
 * input, docs/security.md "Numbers from agent output"): `num` reads it as 0, `hasNum` says whether there is one.
 */
export const hasNum = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0
export const num = (value: unknown): number => (hasNum(value) ? value : 0)

export const note = (text: string): LogEntry => ({ kind: 'note', text })
export const error = (text: string): LogEntry => ({ kind: 'error', text })
export const result = (text: string, isError: boolean): LogEntry => ({ kind: 'result', text, error: isError })
export const tool = (name: string, input: unknown): LogEntry => ({
  kind: 'tool',
  name,
  detail: shortArgument(input),
})
export const modelSuffix = (model: unknown) => (typeof model === 'string' && model ? ` (${model})` : '')

export function errorText(value: unknown): string {
  if (typeof value === 'string') return value
  if (!isObj(value)) return 'error'
  if (typeof value.message === 'string') return value.message
  if (isObj(value.data) && typeof value.data.message === 'string') return value.data.message
  if (isObj(value.error)) return errorText(value.error)
  return str(value.name) ?? str(value.type) ?? JSON.stringify(value)
}

/** The argument that says most about a tool call: its command, path, pattern or query; else its JSON. */
function shortArgument(input: unknown): string {
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
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((block) => (isObj(block) && typeof block.text === 'string' ? block.text : ''))
      .filter(Boolean)
      .join('\n')
  }
  return content === undefined || content === null ? '' : JSON.stringify(content)
}

export function claudeMessage(message: Obj): LogEntry[] {
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

export function codexItem(item: Obj, completed: boolean): LogEntry[] {
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
    case 'error': {
      const text = str(item.message) ?? 'error'
      return [CODEX_TRANSIENT.test(text) ? note(text) : error(text)]
    }
    default:
      return completed ? [note(`${String(item.type)}`)] : []
  }
}

export function opencodeTool(part: Obj): LogEntry[] {
  const state = isObj(part.state) ? part.state : {}
  const failed = state.status === 'error'
  return [
    tool(str(part.tool) ?? '?', state.input),
    result(failed ? (str(state.error) ?? 'failed') : (str(state.output) ?? ''), failed),
  ]
}

/**
 * claude's `system` events: `init` names the session; `api_retry` (claude-code 2.1: `attempt`, `max_retries`,
 * `retry_delay_ms`, `error_status`, `error`) says a request to the API failed and will be tried again, which
 * otherwise looks like a run that hangs.
 */
export function claudeSystem(event: Obj): LogEntry[] {
  if (event.subtype === 'init')
    return [note(`session ${str(event.session_id) ?? '?'}${modelSuffix(event.model)}`)]
  if (event.subtype === 'api_retry') {
    const of = hasNum(event.max_retries) ? `/${num(event.max_retries)}` : ''
    const delay = hasNum(event.retry_delay_ms)
      ? ` in ${Math.round(num(event.retry_delay_ms) / 100) / 10} s`
      : ''
    const status = hasNum(event.error_status) ? `${num(event.error_status)} ` : ''
    const why = event.error === undefined || event.error === null ? '' : errorText(event.error)
    const reason = `${status}${why}`.trim()
    return [
      note(
        `API request failed, retrying (attempt ${num(event.attempt)}${of}${delay})${reason ? `: ${reason}` : ''}`,
      ),
    ]
  }
  return []
}

/**
 * codex's transient errors, as codex-cli 0.171 prints them while it tries again ("Reconnecting... 2/5 (stream
 * disconnected …)", "Reconnecting... waiting for network (…)", and the item "Falling back from WebSockets to
 * HTTPS transport. …"): not failures of the run, which come as `turn.failed`, so they are shown as notes.
 */
const CODEX_TRANSIENT = /^(reconnecting\b|falling back from websockets to https)/i

/** codex's `error` events: a warning or a transient retry is a note; anything else an error. */
export function codexError(event: Obj): LogEntry[] {
  const text = errorText(event)
  if (event.severity === 'warning') return [note(`warning: ${text}`)]
  return [CODEX_TRANSIENT.test(text) ? note(text) : error(text)]
}

/** opencode's `step_finish`: the step's tokens and cost (cache reads and writes are input too); null: none. */
export function opencodeStepUsage(event: Obj): Usage | null {
  const part = isObj(event.part) ? event.part : {}
  const tokens = isObj(part.tokens) ? part.tokens : null
  if (!tokens) return null
  const cache = isObj(tokens.cache) ? tokens.cache : {}
  return {
    input_tokens: num(tokens.input) + num(cache.read) + num(cache.write),
    output_tokens: num(tokens.output) + num(tokens.reasoning),
    cached_tokens: num(cache.read),
    cost_usd: hasNum(part.cost) ? num(part.cost) : null,
  }
}
