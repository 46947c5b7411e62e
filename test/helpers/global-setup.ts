import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The end-to-end tests run the built binary as a user would; `npm test` builds it first. */
export default function setup(): void {
  const bundle = fileURLToPath(new URL('../../dist/harness.cjs', import.meta.url))
  if (!existsSync(bundle)) throw new Error('dist/harness.cjs is missing: run "npm run build" (npm test does)')
}
