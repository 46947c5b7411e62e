import type * as z from 'zod/mini'

/**
 * A schema compiled into plain closures: the fast path for reading records. zod's generic parse costs most of a
 * 10,000-record listing in the native executable, whose JavaScriptCore runs cold code slowly. The compiled check
 * accepts a subset of what the schema accepts and then returns exactly what zod would (the same values, the
 * same key order); anything else (an unusual value, a shape it does not know) is `REFER`, and the caller asks
 * zod, which stays the authority for the result and for every error message. So a record is never accepted
 * here that zod would refuse: test/unit/sessions/record/compiled-check.test.ts holds the two side by side.
 */
export const REFER: unique symbol = Symbol('refer to zod')
export type CompiledCheck = (value: unknown) => unknown

/** zod's internals as far as they are read here (zod 4: every schema carries `_zod.def`). */
interface Def {
  type: string
  check?: string
  checks?: Array<{
    _zod: { def: { check: string; format?: string; pattern?: RegExp; value?: unknown; inclusive?: boolean } }
  }>
  format?: string
  pattern?: RegExp
  shape?: Record<string, Schema>
  catchall?: Schema
  innerType?: Schema
  element?: Schema
  entries?: Record<string, unknown>
  in?: Schema
  out?: Schema
  transform?: (value: unknown, payload: { value: unknown; issues: unknown[] }) => unknown
}
type Schema = { _zod: { def: Def } }

/** Compiles `schema`; null when it uses something this compiler does not know (then zod does all the work). */
export function compileCheck(schema: z.core.SomeType): CompiledCheck | null {
  return compile(schema as unknown as Schema)
}

function compile(schema: Schema): CompiledCheck | null {
  const def = schema._zod.def
  switch (def.type) {
    case 'string':
      return compileString(def)
    case 'number':
      return compileNumber(def)
    case 'boolean':
      return def.checks?.length ? null : (v) => (typeof v === 'boolean' ? v : REFER)
    case 'unknown':
      return (v) => v
    case 'enum': {
      const values = new Set(Object.values(def.entries ?? {}))
      return (v) => (typeof v === 'string' && values.has(v) ? v : REFER)
    }
    case 'optional':
      return wrap(def.innerType, undefined)
    case 'nullable':
      return wrap(def.innerType, null)
    case 'array':
      return compileArray(def)
    case 'object':
      return compileObject(def)
    case 'pipe':
      return compilePipe(def)
    case 'transform':
      return compileTransform(def)
    default:
      return null
  }
}

/** A number, with lower bounds (`z.gte`, `z.gt`: amounts and counts are never negative) and nothing else. */
function compileNumber(def: Def): CompiledCheck | null {
  const bounds: { value: number; inclusive: boolean }[] = []
  for (const check of def.checks ?? []) {
    const { check: kind, value, inclusive } = check._zod.def
    if (kind !== 'greater_than' || typeof value !== 'number') return null
    bounds.push({ value, inclusive: inclusive === true })
  }
  // JSON never holds NaN or Infinity; zod refuses them, and so does this.
  return (v) =>
    typeof v === 'number' &&
    Number.isFinite(v) &&
    bounds.every((bound) => (bound.inclusive ? v >= bound.value : v > bound.value))
      ? v
      : REFER
}

function compileString(def: Def): CompiledCheck | null {
  const checks = def.checks ?? []
  // A string format (the datetimes) is its own check, or the only check on a plain string.
  const formats = def.format ? [def] : checks.map((check) => check._zod.def)
  if (formats.some((f) => f.check !== 'string_format' || !(f.pattern instanceof RegExp))) return null
  const patterns = formats.map((f) => f.pattern as RegExp)
  if (patterns.length === 0) return (v) => (typeof v === 'string' ? v : REFER)
  return (v) => (typeof v === 'string' && patterns.every((p) => p.test(v)) ? v : REFER)
}

/** optional (`empty` undefined) and nullable (`empty` null): that one value passes as is. */
function wrap(inner: Schema | undefined, empty: null | undefined): CompiledCheck | null {
  const check = inner && compile(inner)
  if (!check) return null
  return (v) => (v === empty ? v : check(v))
}

function compileArray(def: Def): CompiledCheck | null {
  const element = def.element && compile(def.element)
  if (!element || def.checks?.length) return null
  return (v) => {
    if (!Array.isArray(v)) return REFER
    const out = new Array(v.length)
    for (let i = 0; i < v.length; i++) {
      const item = element(v[i])
      if (item === REFER) return REFER
      out[i] = item
    }
    return out
  }
}

/** Whether a shape's schema lets its key be absent (zod's own test: an optional input). */
function mayBeAbsent(schema: Schema): boolean {
  return schema._zod.def.type === 'optional'
}

/**
 * A loose object, as zod returns it: a new object with the shape's keys in the shape's order (absent optional
 * keys left out), then every other key in the input's order.
 */
function compileObject(def: Def): CompiledCheck | null {
  if (!def.shape || def.checks?.length || def.catchall?._zod.def.type !== 'unknown') return null
  const keys = Object.keys(def.shape)
  // zod reads a key through the prototype chain (an inherited `constructor` is a value to it); keep to own keys.
  if (keys.some((key) => key in Object.prototype)) return null
  const checks: CompiledCheck[] = []
  const optional: boolean[] = []
  for (const key of keys) {
    const schema = def.shape[key] as Schema
    const check = compile(schema)
    if (!check) return null
    checks.push(check)
    optional.push(mayBeAbsent(schema))
  }
  const known = new Set(keys)
  return (v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return REFER
    // A key named __proto__ is a prototype to assign, not data: zod decides what it does with one.
    if (Object.getPrototypeOf(v) !== Object.prototype || Object.hasOwn(v, '__proto__')) return REFER
    const input = v as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      const value = Object.hasOwn(input, key) ? input[key] : undefined
      if (value === undefined) {
        if (!optional[i]) return REFER
        if (Object.hasOwn(input, key)) out[key] = undefined
        continue
      }
      const checked = (checks[i] as CompiledCheck)(value)
      if (checked === REFER) return REFER
      out[key] = checked
    }
    for (const key of Object.keys(input)) if (!known.has(key)) out[key] = input[key]
    return out
  }
}

function compilePipe(def: Def): CompiledCheck | null {
  const first = def.in && compile(def.in)
  const second = def.out && compile(def.out)
  if (!first || !second) return null
  return (v) => {
    const middle = first(v)
    return middle === REFER ? REFER : second(middle)
  }
}

/** A synchronous transform is called as zod calls it; one that reports an issue or is async is zod's to run. */
function compileTransform(def: Def): CompiledCheck | null {
  const transform = def.transform
  if (!transform) return null
  return (v) => {
    const payload = { value: v, issues: [] as unknown[] }
    const out = transform(v, payload)
    return payload.issues.length || out instanceof Promise ? REFER : out
  }
}
