// What the reading commands (session list, show, path) call: loaded for any of them, never for another.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderSession from '../../render/session.js'
export * as query from '../../sessions/query/query.js'
export * as read from '../session-read.js'
export * as watch from '../watch.js'
