/**
 * A session's statuses, on their own: the record's description (record/schema.ts) and the `--status` flags of
 * list, cleanup and archive (commands/session/cleanup.ts) read them without loading anything else.
 */
export const SESSION_STATUSES = ['RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'KILLED'] as const
export type SessionStatus = (typeof SESSION_STATUSES)[number]
