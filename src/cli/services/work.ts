// What the commands on a session's work call (diff, checkpoints, restore, export, merge).
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderCheckpoints from '../../render/checkpoints.js'
export * as renderExport from '../../render/export.js'
export * as renderLogStream from '../../render/log-stream.js'
export * as renderMerge from '../../render/merge.js'
export * as workCheckpoints from '../../sessions/work/checkpoints.js'
export * as diff from '../../sessions/work/diff.js'
export * as workExport from '../../sessions/work/export.js'
export * as workMerge from '../../sessions/work/merge.js'
