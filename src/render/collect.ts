import type { CollectOutcome } from '../sessions/control/settle.js'
import { terminalSafeLine } from './safe.js'

const SAID: Record<CollectOutcome['outcome'], string> = {
  settled: 'settled',
  collected: 'work collected',
  running: 'still running: left as it is',
  nothing: 'nothing to collect',
  failed: 'its work could not be brought back',
  reconciled: 'gone without a word: PAUSED (resumable)',
}

/** `session collect`: one line per session, what became of it. */
export function renderCollect(outcomes: CollectOutcome[]): string {
  if (outcomes.length === 0) return 'nothing to collect'
  return outcomes
    .map((o) => {
      const exit = o.exit_code === null ? '' : `, exit ${o.exit_code}`
      const reason = o.reason ? `: ${terminalSafeLine(o.reason)}` : ''
      return `${terminalSafeLine(o.id)}  ${SAID[o.outcome]} (${o.status}${exit})${reason}`
    })
    .join('\n')
}
