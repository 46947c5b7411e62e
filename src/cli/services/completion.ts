// What shell completion and shell-init call: a TAB press loads this and nothing heavier.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderSession from '../../render/session.js'
export * as sessionsCompletion from '../../sessions/completion.js'
export * as cliCompletion from '../completion.js'
export * as shellInit from '../shell-init.js'
