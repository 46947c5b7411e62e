// What session logs calls.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderLogStream from '../../render/log-stream.js'
export * as logs from '../../sessions/query/logs.js'
