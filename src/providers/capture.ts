import type { ResolvedProvider } from './args.js'

/**
 * The agent's own session id from its headless JSON output (one JSON object per line, as codex `--json`
 * and opencode `--format json` print): the first non-empty string under the provider's capture key, at any
 * depth. Lines that are not JSON are skipped.
 */
export function findCapturedSessionId(
  provider: Pick<ResolvedProvider, 'session_id_capture'>,
  output: string,
): string | undefined {
  const key = provider.session_id_capture?.key
  if (!key) return undefined
  for (const line of output.split('\n')) {
    const text = line.trim()
    if (!text.startsWith('{')) continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      continue
    }
    const found = findKey(value, key, 0)
    if (found) return found
  }
  return undefined
}

function findKey(value: unknown, key: string, depth: number): string | undefined {
  if (depth > 8 || value === null || typeof value !== 'object') return undefined
  if (!Array.isArray(value) && Object.hasOwn(value, key)) {
    const found = (value as Record<string, unknown>)[key]
    if (typeof found === 'string' && found !== '') return found
  }
  for (const child of Object.values(value)) {
    const found = findKey(child, key, depth + 1)
    if (found) return found
  }
  return undefined
}
