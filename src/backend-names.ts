/**
 * The backends a session can run on (SPEC §14, docs/backends.md): each is one module under sessions/backends/,
 * chosen by its picker. The names alone live here, where the record schema and the config schema declare them.
 */
export const BACKEND_NAMES = ['local', 'container', 'slurm'] as const
export type BackendName = (typeof BACKEND_NAMES)[number]

/** A name as a backend's (a value the dashboard's form gives back): one of BACKEND_NAMES, else local. */
export function backendNameOr(text: string, otherwise: BackendName = 'local'): BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(text) ? (text as BackendName) : otherwise
}
