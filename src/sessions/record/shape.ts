/**
 * The parts the record's description (record/schema.ts) is made of: the one validator of session records, used
 * by the store and by the small entry (cli/fast-entry.ts) alike. A description is plain data (what each key
 * holds); `check` reads a value against it, returning the checked value, or the problems as paths and
 * messages. A record means what the zod schema it replaced meant (docs/development/design.md, "The record store"): the
 * same records accepted, the same value returned (an object's described keys first, in their order, then the
 * rest in the input's), the same messages. test/unit/sessions/record/shape.test.ts holds the two side by side
 * over generated records.
 *
 * Data rather than closures: the small entry builds the record's description on every start, and a hundred
 * small objects cost a fraction of a hundred closures (docs/development/native.md, "Start-up").
 */

export interface Issue {
  path: Array<string | number>
  message: string
}

/** What a value may be: a kind and what the kind needs (the values of a `oneOf`, an array's element...). */
interface Described {
  readonly kind: 'string' | 'number' | 'boolean' | 'dateTime' | 'oneOf' | 'upperOneOf' | 'array' | 'object'
  readonly nullable?: true
  readonly optional?: true
  /** number: the least it may be, and whether that itself is out (exclusive). */
  readonly minimum?: number
  readonly exclusive?: boolean
  /** string: a pattern it must match. */
  readonly pattern?: RegExp
  /** oneOf, upperOneOf: the values, and their list in order (for messages). */
  readonly values?: ReadonlySet<unknown>
  readonly list?: readonly string[]
  /** array: what each element is. */
  readonly element?: Described
  /** object: the described keys in order, what each holds, and the keys as a set. */
  readonly keys?: readonly string[]
  readonly shapes?: readonly Described[]
  readonly known?: ReadonlySet<string>
}

/** A description of values read as `T` (the type is for `Infer` alone). */
export interface Shape<T> extends Described {
  readonly __type?: T
}
/** A shape whose key may be absent from its object. */
export interface OptionalShape<T> extends Shape<T | undefined> {
  readonly optional: true
}

export type Infer<S> = S extends Shape<infer T> ? T : never

type AnyShape = Shape<unknown>
type Shapes = Record<string, AnyShape>
type OptionalKeys<S extends Shapes> = {
  [K in keyof S]: S[K] extends { readonly optional: true } ? K : never
}[keyof S]
type Flat<T> = { [K in keyof T]: T[K] }
/** What a loose object holds: its described keys, typed, and any other key as unknown. */
export type LooseObject<S extends Shapes> = Flat<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }
> & { [key: string]: unknown }

export const string: Shape<string> = { kind: 'string' }
/** A finite number: JSON holds no other, and NaN or Infinity in a record is a mistake. */
export const number: Shape<number> = { kind: 'number' }
export const boolean: Shape<boolean> = { kind: 'boolean' }

/** A finite number of at least `minimum`, or above it when `exclusive` (an amount is never negative). */
export function numberFrom(minimum: number, exclusive = false): Shape<number> {
  return { kind: 'number', minimum, exclusive }
}

/** A string that `pattern` matches. */
export function matching(pattern: RegExp): Shape<string> {
  return { kind: 'string', pattern }
}
/**
 * An ISO 8601 date and time with seconds and a zone (`Z` or `±hh:mm`), fractions of a second optional, the
 * day valid for its month and year, as zod's `iso.datetime({ offset: true })` checks it.
 */
export const dateTime: Shape<string> = { kind: 'dateTime' }

/** One of `values`, exactly. */
export function oneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  return { kind: 'oneOf', values: new Set(values), list: values }
}

/** A string that is one of `values` once upper-cased, returned upper-cased (`running` reads as RUNNING). */
export function upperOneOf<const V extends readonly string[]>(values: V): Shape<V[number]> {
  return { kind: 'upperOneOf', values: new Set(values), list: values }
}

/** `inner`, or null. */
export function nullable<T>(inner: Shape<T>): Shape<T | null> {
  return { ...inner, nullable: true } as Shape<T | null>
}

/** `inner`, or undefined: the key may be absent. */
export function optional<T>(inner: Shape<T>): OptionalShape<T> {
  return { ...inner, optional: true } as OptionalShape<T>
}

/** What most of a record's fields are: absent, null, or `inner`. */
export function opt<T>(inner: Shape<T>): OptionalShape<T | null> {
  return { ...inner, nullable: true, optional: true } as OptionalShape<T | null>
}

/** An array of `element`s, as a new array. */
export function array<T>(element: Shape<T>): Shape<T[]> {
  return { kind: 'array', element }
}

/**
 * An object with the keys `described`, and any others kept as they are: a new object holding the described
 * keys first, in the order given (an absent optional key left out; one present as undefined kept), then every
 * other enumerable key in the input's order, except `__proto__` (a prototype to assign, not data: it is
 * dropped, as zod drops it). A described key is read as zod reads it, through the prototype chain.
 */
export function looseObject<S extends Shapes>(described: S): Shape<LooseObject<S>> {
  const keys = Object.keys(described)
  // A key the prototype has (`constructor`) would be read from it when absent: not a shape to describe.
  const inherited = keys.find((key) => key in Object.prototype)
  if (inherited !== undefined) throw new Error(`a described key may not be named ${inherited}`)
  return { kind: 'object', keys, shapes: keys.map((key) => described[key] as AnyShape), known: new Set(keys) }
}

const FAIL: unique symbol = Symbol('invalid')

/**
 * Set by `parse` when the value it returns holds anything other than the input's own content, rearranged: a
 * string upper-cased, a `__proto__` key dropped, a key read from a prototype. `check` reports it (`asIs`).
 */
let changed = false

const DATE_TIME =
  /^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/

/** `value` as `shape` reads it, or FAIL at its first problem (null and undefined are the caller's). */
function parse(shape: Described, value: unknown): unknown {
  switch (shape.kind) {
    case 'string':
      return typeof value === 'string' && (shape.pattern === undefined || shape.pattern.test(value))
        ? value
        : FAIL
    case 'number':
      return Number.isFinite(value) && aboveMinimum(shape, value as number) ? value : FAIL
    case 'boolean':
      return typeof value === 'boolean' ? value : FAIL
    case 'dateTime':
      return typeof value === 'string' && DATE_TIME.test(value) ? value : FAIL
    case 'oneOf':
      return (shape.values as ReadonlySet<unknown>).has(value) ? value : FAIL
    case 'upperOneOf': {
      if (typeof value !== 'string') return FAIL
      const upper = value.toUpperCase()
      if (upper !== value) changed = true
      return (shape.values as ReadonlySet<unknown>).has(upper) ? upper : FAIL
    }
    case 'array':
      return parseArray(shape.element as Described, value)
    case 'object':
      return parseObject(shape, value)
  }
}

function aboveMinimum(shape: Described, value: number): boolean {
  const { minimum } = shape
  return minimum === undefined || (shape.exclusive ? value > minimum : value >= minimum)
}

/** The value of a key or an element: null or undefined where the shape allows it, else `parse`. */
function parseSlot(shape: Described, value: unknown): unknown {
  if (value === null && shape.nullable) return null
  if (value === undefined) return shape.optional ? undefined : FAIL
  return parse(shape, value)
}

function parseArray(element: Described, value: unknown): unknown {
  if (!Array.isArray(value)) return FAIL
  const out = new Array(value.length)
  for (let i = 0; i < value.length; i++) {
    const item = parseSlot(element, value[i])
    if (item === FAIL) return FAIL
    out[i] = item
  }
  return out
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseObject(shape: Described, value: unknown): unknown {
  if (!isObject(value)) return FAIL
  const keys = shape.keys as readonly string[]
  const shapes = shape.shapes as readonly Described[]
  const known = shape.known as ReadonlySet<string>
  if (Object.getPrototypeOf(value) !== Object.prototype) changed = true
  const out: Record<string, unknown> = {}
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    const slot = shapes[i] as Described
    const item = value[key]
    if (item === undefined) {
      if (!slot.optional) return FAIL
      if (key in value) out[key] = undefined
      continue
    }
    const checked = parseSlot(slot, item)
    if (checked === FAIL) return FAIL
    out[key] = checked
  }
  for (const key in value) {
    if (known.has(key)) continue
    if (key === '__proto__') changed = true
    else out[key] = value[key]
  }
  return out
}

/**
 * `value` as `parse` returns it for a value it accepted without change (`asIs`), without a check: only the
 * described keys' order, at every level. For a record whose bytes were checked before (record/read-cache.ts).
 */
export function reshape(shape: Described, value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    const element = shape.element as Described
    const out = new Array(value.length)
    for (let i = 0; i < value.length; i++) out[i] = reshape(element, value[i])
    return out
  }
  const keys = shape.keys as readonly string[]
  const shapes = shape.shapes as readonly Described[]
  const out: Record<string, unknown> = {}
  let count = 0
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string
    const item = (value as Record<string, unknown>)[key]
    if (item === undefined) continue
    out[key] = typeof item === 'object' ? reshape(shapes[i] as Described, item) : item
    count++
  }
  // Keys it does not describe follow, as the validator keeps them: only when there are any.
  if (Object.keys(value).length !== count) {
    const known = shape.known as ReadonlySet<string>
    for (const key in value) {
      if (!known.has(key) && key !== '__proto__') out[key] = (value as Record<string, unknown>)[key]
    }
  }
  // V8 turns an object given more than a dozen computed keys into a dictionary, which JSON.stringify (the
  // listing's output) reads at about half speed; a copy by spread is a plain object again.
  return count > 12 ? { ...out } : out
}

/** A text that differs whenever what `shape` accepts, or the order it gives keys, differs. */
export function describeShape(shape: Described): string {
  const { element, shapes, keys, values: _set, known: _keys, pattern, ...rest } = shape
  return JSON.stringify([
    rest,
    pattern ? String(pattern) : null,
    element ? describeShape(element) : null,
    keys ?? null,
    shapes?.map(describeShape) ?? null,
  ])
}

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

/** Every problem of `value` (which `parseSlot` refused) as `shape` reads it, in the order zod reported them. */
function explain(shape: Described, value: unknown, path: Array<string | number>, issues: Issue[]): void {
  const typeIssue = (expected: string) =>
    issues.push({ path, message: `Invalid input: expected ${expected}, received ${received(value)}` })
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') typeIssue('string')
      else issues.push({ path, message: `Invalid string: must match pattern ${shape.pattern}` })
      break
    case 'number':
      if (!Number.isFinite(value)) typeIssue('number')
      else
        issues.push({
          path,
          message: `Too small: expected number to be ${shape.exclusive ? '>' : '>='}${shape.minimum}`,
        })
      break
    case 'boolean':
      typeIssue(shape.kind)
      break
    case 'dateTime':
      if (typeof value !== 'string') typeIssue('string')
      else issues.push({ path, message: 'Invalid ISO datetime' })
      break
    case 'oneOf':
    case 'upperOneOf': {
      if (shape.kind === 'upperOneOf' && typeof value !== 'string') typeIssue('string')
      else {
        const quoted = (shape.list as readonly string[]).map((one) => `"${one}"`)
        issues.push({ path, message: `Invalid option: expected one of ${quoted.join('|')}` })
      }
      break
    }
    case 'array':
      if (!Array.isArray(value)) typeIssue('array')
      else
        for (let i = 0; i < value.length; i++)
          explainSlot(shape.element as Described, value[i], [...path, i], issues)
      break
    case 'object': {
      if (!isObject(value)) typeIssue('object')
      else {
        const shapes = shape.shapes as readonly Described[]
        ;(shape.keys as readonly string[]).forEach((key, i) => {
          explainSlot(shapes[i] as Described, value[key], [...path, key], issues)
        })
      }
    }
  }
}

function explainSlot(shape: Described, value: unknown, path: Array<string | number>, issues: Issue[]): void {
  if (parseSlot(shape, value) === FAIL) explain(shape, value, path, issues)
}

/**
 * `value` checked by `shape`: the checked value, or the first `limit` issues. `asIs`: the checked value holds
 * the input's content unchanged, only rearranged (its keys in the described order, copies of its objects).
 */
export function check<T>(
  shape: Shape<T>,
  value: unknown,
  limit: number,
): { ok: true; value: T; asIs: boolean } | { ok: false; issues: Issue[] } {
  changed = false
  const parsed = parseSlot(shape, value)
  if (parsed !== FAIL) return { ok: true, value: parsed as T, asIs: !changed }
  const issues: Issue[] = []
  explain(shape, value, [], issues)
  return { ok: false, issues: issues.slice(0, limit) }
}
