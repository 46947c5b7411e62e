import { UsageError } from './errors.js'

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const
export type Unit = keyof typeof UNIT_MS

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

/** A duration from a flag (text) or a config file (text, or a bare number). */
export type DurationInput = string | number

/**
 * A duration as reports print it: a bare number gets the unit it means (`7` as days is "7d", so "younger than
 * 7d"); anything else as given, trimmed.
 */
export function durationText(value: DurationInput, bareUnit: Unit): string {
  const text = String(value).trim()
  return /^\d+(\.\d+)?$/.test(text) ? `${text}${bareUnit}` : text
}

/** A duration setting (flag or config value): its text with its unit, for reports, and its length. */
export function durationSetting(
  value: DurationInput,
  options: { bareUnit: Unit; flag?: string },
): { text: string; ms: number } {
  return { text: durationText(value, options.bareUnit), ms: parseDuration(String(value), options) }
}

/**
 * `run --timeout` / `resume --timeout`: the run's wall-clock limit in ms (SPEC §5). A bare number is seconds; any
 * length (past the 24.8 days one timer holds: long-timer.ts); zero is a usage error.
 */
export function runTimeoutFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const ms = parseDuration(text, { bareUnit: 's', flag: '--timeout' })
  if (ms <= 0) {
    throw new UsageError(`--timeout must be more than 0: "${text}"`, 'e.g. --timeout 30m', 'INVALID_DURATION')
  }
  return ms
}

/** `--older-than` of cleanup, archive and prune; bare numbers are days. */
export function olderThanFlag(text: string | undefined): { text: string; ms: number } | undefined {
  if (text === undefined) return undefined
  return durationSetting(text, { bareUnit: 'd', flag: '--older-than' })
}
