// The source files under a folder, in a stable order: what the project's own checks (import-cycles.mjs,
// long-functions.mjs) walk.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/** Every file under `dir` whose name matches `pattern` (declaration files `.d.ts` excepted), sorted by name. */
export function* sourceFiles(dir, pattern) {
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sourceFiles(path, pattern)
    else if (pattern.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path
  }
}
