import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * Scripted model servers on 127.0.0.1 for the real agent CLIs: each request is recorded, and answered by the
 * script: while the conversation holds no tool result yet, with a tool call; after it, with a final text.
 * Usage is fixed per answer, so a test can compare what harness recorded with what the server reported.
 */
export interface RecordedRequest {
  path: string
  body: Record<string, unknown>
  /** The whole request body as text: what a test searches for the first conversation. */
  text: string
}

export interface ToolCall {
  /** The tool's name as the CLI calls it (claude: Write / Bash). */
  name: string
  input: Record<string, unknown>
  /** Responses API only: a freeform tool (codex's apply_patch), its text in `input.input`. */
  custom?: boolean
}

export interface ScriptedServer {
  url: string
  requests: RecordedRequest[]
  /** Tokens each answer reports. */
  usage: { input: number; output: number }
  close(): Promise<void>
}

export const USAGE = { input: 120, output: 30 }

/** The tool call to make next, or null for the final text; asked with the conversation so far. */
export type Script = (request: RecordedRequest) => ToolCall | null

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
  })
}

async function listen(
  handle: (req: IncomingMessage, res: ServerResponse, request: RecordedRequest) => void,
  /** Which POSTs are turns of the conversation (recorded); default all. */
  isTurn: (path: string) => boolean = () => true,
  /** The address it listens on: loopback, or the test cluster's bridge, which its nodes reach. */
  host = '127.0.0.1',
): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = []
  const server: Server = createServer(async (req, res) => {
    const text = await readBody(req)
    let body: Record<string, unknown> = {}
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {}
    } catch {}
    const request = { path: req.url ?? '', body, text }
    if (req.method === 'POST' && isTurn(request.path)) requests.push(request)
    handle(req, res, request)
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}`,
    requests,
    usage: USAGE,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function sse(res: ServerResponse, events: [string | null, unknown][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const [event, data] of events) {
    res.write(
      `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
    )
  }
  res.end()
}

/** The Anthropic Messages API (`POST /v1/messages`, streamed as SSE), as claude uses it via ANTHROPIC_BASE_URL. */
export function anthropicServer(script: Script, host?: string): Promise<ScriptedServer> {
  let n = 0
  return listen(
    (req, res, request) => {
      if (req.method !== 'POST' || !request.path.startsWith('/v1/messages')) {
        res.writeHead(request.path.includes('count_tokens') ? 200 : 404, {
          'content-type': 'application/json',
        })
        res.end(JSON.stringify({ input_tokens: 1 }))
        return
      }
      n++
      const call = script(request)
      const id = `msg_${n}`
      const model = String(request.body.model ?? 'claude-sonnet-4-5')
      const start = {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: USAGE.input, output_tokens: 1 },
        },
      }
      const block = call
        ? [
            [
              'content_block_start',
              {
                type: 'content_block_start',
                index: 0,
                content_block: { type: 'tool_use', id: `toolu_${n}`, name: call.name, input: {} },
              },
            ],
            [
              'content_block_delta',
              {
                type: 'content_block_delta',
                index: 0,
                delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) },
              },
            ],
          ]
        : [
            [
              'content_block_start',
              { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
            ],
            [
              'content_block_delta',
              { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'All done.' } },
            ],
          ]
      sse(res, [
        ['message_start', start],
        ...(block as [string, unknown][]),
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        [
          'message_delta',
          {
            type: 'message_delta',
            delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null },
            usage: { output_tokens: USAGE.output },
          },
        ],
        ['message_stop', { type: 'message_stop' }],
      ])
    },
    undefined,
    host,
  )
}

/** True when the Anthropic conversation so far ends with a tool result (the tool ran, or was refused). */
export function anthropicHasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[]
  const last = messages[messages.length - 1]
  return (
    Array.isArray(last?.content) &&
    (last.content as { type?: string }[]).some((part) => part.type === 'tool_result')
  )
}

/** The OpenAI chat completions API (`POST /v1/chat/completions`, streamed), for OpenAI-compatible providers. */
export function openaiChatServer(
  script: (request: RecordedRequest) => ToolCall | null,
): Promise<ScriptedServer> {
  let n = 0
  return listen((req, res, request) => {
    if (req.method !== 'POST' || !request.path.includes('/chat/completions')) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model' }] }))
      return
    }
    n++
    const call = script(request)
    const id = `chatcmpl-${n}`
    const base = { id, object: 'chat.completion.chunk', created: 1, model: 'scripted' }
    const delta = call
      ? {
          role: 'assistant',
          tool_calls: [
            {
              index: 0,
              id: `call_${n}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.input) },
            },
          ],
        }
      : { role: 'assistant', content: 'All done.' }
    sse(res, [
      [null, { ...base, choices: [{ index: 0, delta, finish_reason: null }] }],
      [null, { ...base, choices: [{ index: 0, delta: {}, finish_reason: call ? 'tool_calls' : 'stop' }] }],
      [
        null,
        {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: USAGE.input,
            completion_tokens: USAGE.output,
            total_tokens: USAGE.input + USAGE.output,
          },
        },
      ],
      [null, '[DONE]'],
    ])
  })
}

/** True when the chat conversation so far ends with a tool message. */
export function openaiHasToolResult(request: RecordedRequest): boolean {
  const messages = (request.body.messages ?? []) as { role: string }[]
  return messages[messages.length - 1]?.role === 'tool'
}

/**
 * The OpenAI Responses API (`POST /v1/responses`, streamed as SSE), which codex speaks to every model provider.
 * A tool call is a `function_call` output item; `custom` makes it a freeform `custom_tool_call` (codex's
 * apply_patch) whose input is the text in `input.input`.
 */
export function openaiResponsesServer(script: Script): Promise<ScriptedServer> {
  let n = 0
  return listen((req, res, request) => {
    if (req.method !== 'POST' || !request.path.endsWith('/responses')) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }))
      return
    }
    n++
    const call = script(request)
    const id = `resp_${n}`
    const item = call
      ? call.custom
        ? {
            type: 'custom_tool_call',
            id: `ctc_${n}`,
            status: 'completed',
            call_id: `call_${n}`,
            name: call.name,
            input: String(call.input.input ?? ''),
          }
        : {
            type: 'function_call',
            id: `fc_${n}`,
            status: 'completed',
            call_id: `call_${n}`,
            name: call.name,
            arguments: JSON.stringify(call.input),
          }
      : {
          type: 'message',
          id: `msg_${n}`,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'All done.', annotations: [] }],
        }
    const usage = {
      input_tokens: USAGE.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: USAGE.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: USAGE.input + USAGE.output,
    }
    const response = {
      id,
      object: 'response',
      created_at: 1,
      status: 'in_progress',
      model: 'scripted',
      output: [],
    }
    sse(res, [
      ['response.created', { type: 'response.created', response }],
      ['response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }],
      ['response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }],
      [
        'response.completed',
        { type: 'response.completed', response: { ...response, status: 'completed', output: [item], usage } },
      ],
    ])
  })
}

/** True when the Responses conversation so far ends with a tool's output. */
export function responsesHasToolResult(request: RecordedRequest): boolean {
  const input = (request.body.input ?? []) as { type?: string }[]
  const last = input[input.length - 1]
  return last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output'
}

/**
 * The Gemini API (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse`), as gemini reaches it with
 * `GOOGLE_GEMINI_BASE_URL`. A tool call is a `functionCall` part.
 */
export function geminiServer(script: Script): Promise<ScriptedServer> {
  return listen(
    (req, res, request) => {
      if (req.method === 'POST' && request.path.includes(':generateContent')) {
        // gemini's own side questions (its model router, summaries): a plain text answer, not a turn.
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify({
            candidates: [
              { content: { role: 'model', parts: [{ text: '{}' }] }, finishReason: 'STOP', index: 0 },
            ],
            // No tokens: gemini's stats add them to the run's usage, which the tests compare with USAGE.
            usageMetadata: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
          }),
        )
        return
      }
      if (req.method !== 'POST' || !request.path.includes(':streamGenerateContent')) {
        res.writeHead(request.path.includes(':countTokens') ? 200 : 404, {
          'content-type': 'application/json',
        })
        res.end(JSON.stringify({ totalTokens: 1 }))
        return
      }
      const call = script(request)
      const part = call ? { functionCall: { name: call.name, args: call.input } } : { text: 'All done.' }
      sse(res, [
        [
          null,
          {
            candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
            usageMetadata: {
              promptTokenCount: USAGE.input,
              candidatesTokenCount: USAGE.output,
              totalTokenCount: USAGE.input + USAGE.output,
            },
            modelVersion: 'gemini-2.5-flash',
          },
        ],
      ])
    },
    (path) => path.includes(':streamGenerateContent'),
  )
}

/** True when the Gemini conversation so far ends with a function response. */
export function geminiHasToolResult(request: RecordedRequest): boolean {
  const contents = (request.body.contents ?? []) as { parts?: { functionResponse?: unknown }[] }[]
  const last = contents[contents.length - 1]
  return (last?.parts ?? []).some((part) => part.functionResponse !== undefined)
}
