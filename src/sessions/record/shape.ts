/**
 * The parts the record's description (record/schema.ts) is made of: the one validator of session records, used
 * by the store and by the small entry (cli/fast-entry.ts) alike. Each part is two plain functions: `parse`, the
 * fast path, which returns the checked value or FAIL at the first problem, and `explain`, called only after
 * `parse` failed, which lists every problem as a path and a message. A record means what the zod schema it
 * replaced meant (docs/design.md, "The record store"): the same records accepted, the same value returned (an
 * object's described keys first, in their order, then the rest in the input's), the same messages.
 * test/unit/sessions/record/shape.test.ts holds the two side by side over generated records.
 */

export const FAIL: unique symbol = Symbol('invalid')
type Fail = typeof FAIL

export interface Issue {
  path: Array<string | number>
  message: string
}

export interface Shape<T> {
  /** The checked value, or FAIL. */
  readonly parse: (value: unknown) => T | Fail
  /** Why `parse` failed for `value`: one issue per problem, in the order zod reported them. */
  readonly explain: (value: unknown, path: Array<string | number>, issues: Issue[]) => void
  /** A leaf an object checks in its own loop instead of calling `parse` (JavaScriptCore runs that 5× faster). */
  readonly leaf?: Leaf
  /** Whether null is accepted as it is. */
  readonly nullable?: true
}

/** The leaves an object checks inline (looseObject). */
enum Leaf {
  String = 1,
  Number = 2,
  Boolean = 3,
  DateTime = 4,
}

/** A shape whose key may be absent from its object. */
export interface OptionalShape<T> extends Shape<T | undefined> {
  readonly optional: true
}

export type Infer<S> = S extends Shape<infer T> ? T : never

type AnyShape = Shape<unknown>
type Described = Record<string, AnyShape>
type OptionalKeys<S extends Described> = {
  [K in keyof S]: S[K] extends OptionalShape<unknown> ? K : never
}[keyof S]
type Flat<T> = { [K in keyof T]: T[K] }
/** What a loose object holds: its described keys, typed, and any other key as unknown. */
export type LooseObject<S extends Described> = Flat<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }
> & { [key: string]: unknown }

/** A type's name as a message gives it ("received array"). */
function received(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? 'number' : String(value)
    case 'object': {
      if (value === null) return 'null'
      if (Array.isArray(value)) return 'array'
      // An instance of a class is named by its class, as zod names it.
      if (Object.getPrototypeOf(value) !== Object.prototype && 'constructor' in value && value.constructor) {
        return String((value.constructor as { name?: unknown }).name)
      }
      return 'object'
    }
    default:
      return typeof value
  }
}

function typeIssue(expected: string, value: unknown, path: Array<string | number>, issues: Issue[]): void {
  issues.push({ path, message: `Invalid input: expected ${expected}, received ${received(value)}` })
}

/** A leaf that accepts what `test` accepts, as it is. */
function leaf<T>(expected: string, kind: Leaf, test: (value: unknown) => boolean): Shape<T> {
  return {
    leaf: kind,
    parse: (v) => (test(v) ? (v as T) : FAIL),
    explain: (v, path, issues) => typeIssue(expected, v, path, issues),
  }
}

export const string: Shape<string> = leaf('string', Leaf.String, (v) => typeof v === 'string')
/** A finite number: JSON holds no other, and NaN or Infinity in a record is a mistake. */
export const number: Shape<number> = leaf('number', Leaf.Number, (v) => Number.isFinite(v))
export const boolean: Shape<boolean> = leaf('boolean', Leaf.Boolean, (v) => typeof v === 'boolean')

/**
 * An ISO 8601 date and time with seconds and a zone (`Z` or `±hh:mm`), fractions of a second optional, the
 * day valid for its month and year: the pattern zod's `iso.datetime({ offset: true })` checks with.
 */
const DATE_TIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/

export const dateTime: Shape<string> = {
  leaf: Leaf.DateTime,
  parse: (v) => (typeof v === 'string' && DATE_TIME.test(v) ? v : FAIL),
  explain: (v, path, issues) => {
    if (typeof v !== 'string') typeIssue('string', v, path, issues)
    else issues.push({ path, message: 'Invalid ISO datetime' })
  },
}

function oneOfMessage(values: readonly string[]): string {
  return `Invalid option: expected one of ${values.map((value) => `"${value}"`).join('|')}`
}

/** One of `values`, exactly. */
export function oneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  const known = new Set<unknown>(values)
  return {
    parse: (v) => (known.has(v) ? (v as V[number]) : FAIL),
    explain: (_v, path, issues) => issues.push({ path, message: oneOfMessage(values) }),
  }
}

/** A string that is one of `values` once upper-cased, returned upper-cased (`running` reads as RUNNING). */
export function upperOneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  const known = new Set<unknown>(values)
  return {
    parse: (v) => {
      if (typeof v !== 'string') return FAIL
      const upper = v.toUpperCase()
      return known.has(upper) ? (upper as V[number]) : FAIL
    },
    explain: (v, path, issues) => {
      if (typeof v !== 'string') typeIssue('string', v, path, issues)
      else issues.push({ path, message: oneOfMessage(values) })
    },
  }
}

/** `inner`, or null. */
export function nullable<T>(inner: Shape<T>): Shape<T | null> {
  return {
    ...(inner.leaf === undefined ? {} : { leaf: inner.leaf }),
    nullable: true,
    parse: (v) => (v === null ? null : inner.parse(v)),
    explain: inner.explain,
  }
}

/** `inner`, or undefined: the key may be absent. */
export function optional<T>(inner: Shape<T>): OptionalShape<T> {
  return {
    ...(inner.leaf === undefined ? {} : { leaf: inner.leaf }),
    ...(inner.nullable ? { nullable: true } : {}),
    optional: true,
    parse: (v) => (v === undefined ? undefined : inner.parse(v)),
    explain: inner.explain,
  }
}

/** What most of a record's fields are: absent, null, or `inner`. */
export function opt<T>(inner: Shape<T>): OptionalShape<T | null> {
  return optional(nullable(inner))
}

/** An array of `element`s, as a new array. */
export function array<T>(element: Shape<T>): Shape<T[]> {
  return {
    parse: (v) => {
      if (!Array.isArray(v)) return FAIL
      const out = new Array<T>(v.length)
      for (let i = 0; i < v.length; i++) {
        const item = element.parse(v[i])
        if (item === FAIL) return FAIL
        out[i] = item
      }
      return out
    },
    explain: (v, path, issues) => {
      if (!Array.isArray(v)) {
        typeIssue('array', v, path, issues)
        return
      }
      for (let i = 0; i < v.length; i++) {
        if (element.parse(v[i]) === FAIL) element.explain(v[i], [...path, i], issues)
      }
    },
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * An object with the keys `described`, and any others kept as they are: a new object holding the described
 * keys first, in the order given (an absent optional key left out), then every other enumerable key in the
 * input's order, except `__proto__` (a prototype to assign, not data: it is dropped, as zod drops it).
 */
export function looseObject<S extends Described>(described: S): Shape<LooseObject<S>> {
  const keys = Object.keys(described)
  // A key the prototype has (`constructor`) would be read from it when absent: not a shape to describe.
  const inherited = keys.find((key) => key in Object.prototype)
  if (inherited !== undefined) throw new Error(`a described key may not be named ${inherited}`)
  const shapes = keys.map((key) => described[key] as AnyShape)
  const optional = shapes.map((shape) => 'optional' in shape)
  const nullable = shapes.map((shape) => shape.nullable === true)
  const leaves = shapes.map((shape) => shape.leaf ?? 0)
  const known = new Set(keys)
  const parse = (v: unknown): LooseObject<S> | Fail => {
    if (!isObject(v)) return FAIL
    const out: Record<string, unknown> = {}
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      const value = v[key]
      if (value === undefined) {
        if (!optional[i]) return FAIL
        if (key in v) out[key] = undefined
        continue
      }
      if (value === null && nullable[i]) {
        out[key] = null
        continue
      }
      switch (leaves[i]) {
        case Leaf.String:
          if (typeof value !== 'string') return FAIL
          out[key] = value
          break
        case Leaf.Number:
          if (!Number.isFinite(value)) return FAIL
          out[key] = value
          break
        case Leaf.Boolean:
          if (typeof value !== 'boolean') return FAIL
          out[key] = value
          break
        case Leaf.DateTime:
          if (typeof value !== 'string' || !DATE_TIME.test(value)) return FAIL
          out[key] = value
          break
        default: {
          const checked = (shapes[i] as AnyShape).parse(value)
          if (checked === FAIL) return FAIL
          out[key] = checked
        }
      }
    }
    for (const key in v) if (!known.has(key) && key !== '__proto__') out[key] = v[key]
    return out as LooseObject<S>
  }
  const explain = (v: unknown, path: Array<string | number>, issues: Issue[]): void => {
    if (!isObject(v)) {
      typeIssue('object', v, path, issues)
      return
    }
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      const shape = shapes[i] as AnyShape
      if (shape.parse(v[key]) === FAIL) shape.explain(v[key], [...path, key], issues)
    }
  }
  return { parse, explain }
}

/** `value` checked by `shape`: the checked value, or the first `limit` issues. */
export function check<T>(
  shape: Shape<T>,
  value: unknown,
  limit: number,
): { ok: true; value: T } | { ok: false; issues: Issue[] } {
  const parsed = shape.parse(value)
  if (parsed !== FAIL) return { ok: true, value: parsed }
  const issues: Issue[] = []
  shape.explain(value, [], issues)
  return { ok: false, issues: issues.slice(0, limit) }
}
