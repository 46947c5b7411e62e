/**
 * How far long work is (cleanup of hundreds of sessions, prune), told to whoever shows it. The domain only
 * reports; the CLI decides whether anything is shown (a terminal on stderr, not under --json or -q).
 */
export interface ProgressReporter {
  /** About to handle item `done + 1` of `total`, named `item`. */
  step(done: number, total: number, item: string): void
  /** The work is over: whatever was drawn goes away. */
  end(): void
}

export const silentProgress: ProgressReporter = { step: () => {}, end: () => {} }
