// What the chain commands call.
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderChain from '../../render/chain.js'
export * as chains from '../../sessions/chains/chains.js'
