// What the commands that remove sessions call (archive, unarchive, cleanup, delete, prune, auto-cleanup).
// Loaded as one through cli/lazy.ts; each module is a namespace of its own, as the commands call them.

export * as renderArchive from '../../render/archive.js'
export * as renderCleanup from '../../render/cleanup.js'
export * as removalArchive from '../../sessions/removal/archive.js'
export * as autoCleanup from '../../sessions/removal/auto-cleanup.js'
export * as removalCleanup from '../../sessions/removal/cleanup.js'
export * as decision from '../../sessions/removal/decision.js'
export * as prune from '../../sessions/removal/prune.js'
export * as unarchive from '../../sessions/removal/unarchive.js'
