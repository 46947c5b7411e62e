// What the commands that act on a running session call (stop, kill, pause, send, attach, recover, collect).
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderCollect from '../../render/collect.js'
export * as renderRun from '../../render/run.js'
export * as renderSession from '../../render/session.js'
export * as attach from '../../sessions/control/attach.js'
export * as controlRecover from '../../sessions/control/recover.js'
export * as send from '../../sessions/control/send.js'
export * as controlSettle from '../../sessions/control/settle.js'
export * as controlStop from '../../sessions/control/stop.js'
