// What a Context reads records with (cli/context.ts): the store, the seal, the status hooks.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as seal from '../../sessions/record/seal.js'
export * as statusHooks from '../../sessions/record/status-hooks.js'
export * as recordStore from '../../sessions/record/store.js'
