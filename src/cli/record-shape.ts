/**
 * A check of a parsed record against the JSON Schema that zod generates from the record schema
 * (sessions/record/schema.ts), for the small entry (cli/fast-entry.ts), which cannot afford to load zod. It only has
 * to be sound: whatever it accepts, the zod schema accepts. A keyword it does not know makes it refuse, and a
 * refused record is left to the full CLI, which validates it with zod and reports what is wrong.
 */

/** A JSON Schema, as `z.toJSONSchema` writes it for the record schema. */
export type JsonShape = { [keyword: string]: unknown }

const KNOWN = new Set([
  '$schema',
  'type',
  'enum',
  'const',
  'pattern',
  'format',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'minimum',
  'exclusiveMinimum',
])

const patterns = new Map<string, RegExp>()

export function matchesShape(shape: JsonShape, value: unknown): boolean {
  for (const keyword in shape) if (!KNOWN.has(keyword)) return false
  // A format zod checks is always written with the pattern it checks with; alone it is not understood.
  if ('format' in shape && typeof shape.pattern !== 'string') return false
  if (shape.anyOf !== undefined) {
    if (!Array.isArray(shape.anyOf) || !shape.anyOf.some((one) => matchesShape(one as JsonShape, value)))
      return false
  }
  if (shape.type !== undefined) {
    const types = Array.isArray(shape.type) ? shape.type : [shape.type]
    if (!types.some((type) => isType(type, value))) return false
  }
  if ('const' in shape && value !== shape.const) return false
  if (shape.minimum !== undefined || shape.exclusiveMinimum !== undefined) {
    if (typeof value !== 'number') return false
    const { minimum, exclusiveMinimum } = shape
    if (minimum !== undefined && !(typeof minimum === 'number' && value >= minimum)) return false
    if (exclusiveMinimum !== undefined && !(typeof exclusiveMinimum === 'number' && value > exclusiveMinimum))
      return false
  }
  if (shape.enum !== undefined && !(Array.isArray(shape.enum) && shape.enum.includes(value))) return false
  if (shape.pattern !== undefined) {
    if (typeof shape.pattern !== 'string' || typeof value !== 'string') return false
    let pattern = patterns.get(shape.pattern)
    if (!pattern) {
      pattern = new RegExp(shape.pattern)
      patterns.set(shape.pattern, pattern)
    }
    if (!pattern.test(value)) return false
  }
  if (shape.items !== undefined) {
    if (!Array.isArray(value) || !value.every((item) => matchesShape(shape.items as JsonShape, item)))
      return false
  }
  if (
    shape.properties !== undefined ||
    shape.required !== undefined ||
    shape.additionalProperties !== undefined
  ) {
    if (!isType('object', value)) return false
    const object = value as Record<string, unknown>
    const properties = (shape.properties ?? {}) as Record<string, JsonShape>
    const required = shape.required ?? []
    if (!Array.isArray(required) || !required.every((key) => Object.hasOwn(object, key))) return false
    for (const key of Object.keys(object)) {
      const rule = Object.hasOwn(properties, key) ? properties[key] : shape.additionalProperties
      if (rule === undefined) continue
      if (rule === false || (rule !== true && !matchesShape(rule as JsonShape, object[key]))) return false
    }
  }
  return true
}

function isType(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
    case 'array':
      return Array.isArray(value)
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value)
    default:
      return false
  }
}
