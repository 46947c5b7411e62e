import * as z from 'zod/mini'
import { SessionRecordSchema } from '../sessions/record/schema.js'
import type { JsonShape } from './record-shape.js'

/**
 * The record schema as the JSON Schema that cli/record-shape.ts checks: made by `npm run build` into the fast
 * entry (scripts/build.mjs), and by its tests from the same schema. The input side, since records are checked
 * as they are on disk; a schema zod could not write as JSON Schema fails the build instead of being skipped.
 */
export function recordShape(): JsonShape {
  const { $schema: _, ...shape } = z.toJSONSchema(SessionRecordSchema, {
    io: 'input',
    unrepresentable: 'throw',
  })
  return shape
}
