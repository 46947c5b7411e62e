import { UsageError } from './errors.js'

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const
type Unit = keyof typeof UNIT_MS

/**
 * The one duration parser: "1.5s", "90m", "12h", "2w", "1h30m", "250ms". A bare number takes `bareUnit`
 * (cleanup's `--older-than 30` means 30 days; `--grace 2` means 2 seconds). Anything else is a usage error.
 */
export function parseDuration(text: string, options: { bareUnit: Unit; flag?: string }): number {
  const input = text.trim().toLowerCase()
  const fail = () =>
    new UsageError(
      `invalid duration${options.flag ? ` for ${options.flag}` : ''}: "${text}"`,
      'use a number with a unit: 250ms, 1.5s, 90m, 12h, 7d, 2w',
      'INVALID_DURATION',
    )
  if (input === '') throw fail()
  if (/^\d+(\.\d+)?$/.test(input)) return toMs(Number(input), options.bareUnit, fail)
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y
  let total = 0
  let index = 0
  while (index < input.length) {
    part.lastIndex = index
    const m = part.exec(input)
    if (!m) throw fail()
    total += toMs(Number(m[1]), m[2] as Unit, fail)
    index = part.lastIndex
  }
  if (!Number.isSafeInteger(total)) throw fail()
  return total
}

function toMs(value: number, unit: Unit, fail: () => Error): number {
  const ms = Math.round(value * UNIT_MS[unit])
  if (!Number.isFinite(ms) || !Number.isSafeInteger(ms)) throw fail()
  return ms
}

/** `--older-than` of cleanup, archive and prune: its text as given (for reports) and its length; bare numbers are days. */
export function olderThanFlag(text: string | undefined): { text: string; ms: number } | undefined {
  if (text === undefined) return undefined
  return { text, ms: parseDuration(text, { bareUnit: 'd', flag: '--older-than' }) }
}
