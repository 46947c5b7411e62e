// What session wait calls: it reads, it never acts (docs/development/design.md).
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderRun from '../../render/run.js'
export * as controlWait from '../../sessions/control/wait.js'
