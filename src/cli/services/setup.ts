// What the commands that set harness up call (config, trust, doctor, adopt).
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.
export * as configEdit from '../../config-edit.js'
export * as harnessDoctor from '../../doctor.js'
export * as renderDoctor from '../../render/doctor.js'
export * as renderSafe from '../../render/safe.js'
export * as adopt from '../../sessions/control/adopt.js'
export * as projectIndex from '../../sessions/project-index.js'
export * as trust from '../../trust.js'
