// Writes schema/config.schema.json from the zod schema in src/config.ts (a test checks that it is current).
import { writeFileSync } from 'node:fs'
import { build } from 'esbuild'

const out = await build({
  stdin: {
    contents: `import * as z from 'zod/mini'; import { HarnessConfigSchema } from './src/config.ts';
      export default JSON.stringify(z.toJSONSchema(HarnessConfigSchema, { io: 'input', unrepresentable: 'any' }), null, 2)`,
    resolveDir: process.cwd(),
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
})
const mod = await import(
  `data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`
)
writeFileSync('schema/config.schema.json', `${mod.default}\n`)
