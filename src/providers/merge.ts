import type { ProviderSpec } from './schema.js'

type Tokens = string[]
/** Tokens of each mode; a missing mode has not been set at this layer. */
export interface PerModeTokens {
  headless?: Tokens
  interactive?: Tokens
}

/** A list means "the same in both modes". */
export function perMode(value: Tokens | PerModeTokens): PerModeTokens {
  return Array.isArray(value) ? { headless: value, interactive: value } : value
}

const PER_MODE_FIELDS = ['mode_args', 'prompt', 'resume', 'resume_by_id'] as const

/**
 * Lays `override` over `base`, field by field: per-mode fields merge per mode, `permission` per level,
 * anything else (lists included) is replaced; `null` clears a field. Used for user file → project file and
 * for built-in → configuration, so both merges behave the same.
 */
export function mergeProviderSpecs(base: ProviderSpec, override: ProviderSpec): ProviderSpec {
  const merged: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue
    const previous = merged[key]
    if (value === null || previous === null || previous === undefined) {
      merged[key] = value
    } else if ((PER_MODE_FIELDS as readonly string[]).includes(key)) {
      merged[key] = mergeDefined(perMode(previous as Tokens | PerModeTokens), perMode(value as PerModeTokens))
    } else if (key === 'permission') {
      merged[key] = mergePermission(previous as Permissions, value as Permissions)
    } else {
      merged[key] = value
    }
  }
  return merged as ProviderSpec
}

type Permissions = Record<string, Tokens | PerModeTokens | null | undefined>

/** Per level, and within a level per mode (a level given as a list replaces both modes). */
function mergePermission(base: Permissions, override: Permissions): Permissions {
  const result: Permissions = { ...base }
  for (const [level, value] of Object.entries(override)) {
    if (value === undefined) continue
    const previous = result[level]
    result[level] =
      value === null || previous === null || previous === undefined
        ? value
        : mergeDefined(perMode(previous), perMode(value))
  }
  return result
}

function mergeDefined<T extends object>(base: T, override: T): T {
  const result: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  for (const [key, value] of Object.entries(override)) if (value !== undefined) result[key] = value
  return result as T
}
