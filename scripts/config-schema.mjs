// Writes schema/config.schema.json from the zod schema in src/config.ts (a test checks that it is current).
import { writeFileSync } from 'node:fs'
import { evalModule } from './eval-module.mjs'

const mod =
  await evalModule(`import * as z from 'zod/mini'; import { HarnessConfigSchema } from './src/config.ts';
  export default JSON.stringify(z.toJSONSchema(HarnessConfigSchema, { io: 'input', unrepresentable: 'any' }), null, 2)`)
writeFileSync('schema/config.schema.json', `${mod.default}\n`)
