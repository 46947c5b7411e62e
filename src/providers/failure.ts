import type { HeadlessOutput } from './schema.js'

/**
 * The error an agent reported in its headless event stream although it exited 0, if any.
 *
 * pi in `--mode json` exits 0 when the model request failed (a connection error, after its retries), while
 * its text mode exits 1 when the final assistant message stopped with "error" or "aborted". harness applies
 * that same rule to the last `agent_end` event, so the run is recorded FAILED (docs/providers.md). Other
 * formats report failures through their exit code: nothing to read. Lines that are not JSON are skipped;
 * `output` may start mid-line (the tail of a long log).
 */
export function findReportedFailure(format: HeadlessOutput | null, output: string): string | undefined {
  if (format !== 'pi-json') return undefined
  const lines = output.split('\n')
  for (let i = lines.length - 1; i >= 0; i--) {
    const text = lines[i]?.trim() ?? ''
    if (!text.startsWith('{') || !text.includes('"agent_end"')) continue
    let event: unknown
    try {
      event = JSON.parse(text)
    } catch {
      continue
    }
    if ((event as { type?: unknown } | null)?.type !== 'agent_end') continue
    const messages = (event as { messages?: unknown }).messages
    const last: unknown = Array.isArray(messages) ? messages[messages.length - 1] : undefined
    if (!last || typeof last !== 'object') return undefined
    const { role, stopReason, errorMessage } = last as Record<string, unknown>
    if (role !== 'assistant' || (stopReason !== 'error' && stopReason !== 'aborted')) return undefined
    return typeof errorMessage === 'string' && errorMessage ? errorMessage : `request ${stopReason}`
  }
  return undefined
}
