// What run and session resume call.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as duration from '../../duration.js'
export * as renderRun from '../../render/run.js'
export * as budget from '../../sessions/budget.js'
export * as attach from '../../sessions/control/attach.js'
export * as bounds from '../../sessions/record/bounds.js'
export * as start from '../../sessions/run/start.js'
