import { answer } from './cli/fast-entry.js'

/**
 * The native executable's entry (docs/development/native.md, "Start-up"): the small entry answers first, as
 * bin/harness has it answer before the node bundle, and only what it leaves loads the CLI (main.ts). The
 * executable is split into chunks that load on first import, so `session path` and the top-level help never
 * load the command tree.
 */
const code = process.env.HARNESS_NO_FAST_PATH === '1' ? null : await answer(process.argv.slice(2))
if (code !== null) process.exitCode = code
else await import('./main.js')
