/** Where a run's output begins in the session's log (recorded in the run as `log_offset`). */
export interface RunBoundary {
  n: number
  kind: string
  started_at: string
  log_offset: number
}

/** Runs with a recorded log offset, as boundaries; runs recorded before offsets were kept have none. */
export function runBoundaries(
  runs: readonly { n: number; kind: string; started_at: string; log_offset?: unknown }[] | null | undefined,
): RunBoundary[] {
  return (runs ?? []).flatMap((run) =>
    typeof run.log_offset === 'number' && Number.isInteger(run.log_offset) && run.log_offset >= 0
      ? [{ n: run.n, kind: run.kind, started_at: run.started_at, log_offset: run.log_offset }]
      : [],
  )
}
