// Bundles a module given as source text (it may import the project's TypeScript) and returns its exports: the
// build scripts use it to turn zod schemas into JSON Schema at build time.
import { build } from 'esbuild'

export async function evalModule(contents) {
  const out = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
  })
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`)
}
