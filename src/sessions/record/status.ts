import * as z from 'zod/mini'

/**
 * A session's status, on its own: the `--status` flags of list, cleanup and archive parse with it, and loading
 * the whole record schema for them cost every command's start (docs/development/native.md, "Start-up").
 */
export const SESSION_STATUSES = ['RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'KILLED'] as const
export type SessionStatus = (typeof SESSION_STATUSES)[number]

/** Read case-insensitively ("running" and "RUNNING"), always written upper case. */
export const SessionStatusSchema = z.pipe(
  z.pipe(
    z.string(),
    z.transform((s) => s.toUpperCase()),
  ),
  z.enum(SESSION_STATUSES),
)
