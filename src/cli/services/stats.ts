// What session stats calls.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderStats from '../../render/stats.js'
export * as queryStats from '../../sessions/query/stats.js'
