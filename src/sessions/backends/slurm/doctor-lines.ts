import type { DoctorLine, DoctorRequest } from '../backend.js'
import { slurmEngine } from './engine.js'

/**
 * `doctor`'s Slurm lines (SPEC §14): where config sends sessions to Slurm or says `slurm.*`, `sbatch`, the
 * cluster and `sbatch --test-only` (slurmChecks), and with `--submit-test` a real job on a node (submitTest);
 * otherwise only whether the Slurm commands are here, without asking a controller anything.
 */
export async function slurmDoctor(request: DoctorRequest, sbatchHere: boolean): Promise<DoctorLine[]> {
  if (!request.chosen && !request.config.slurm && !request.submitTest) {
    return [
      sbatchHere
        ? {
            name: 'slurm',
            status: 'info',
            detail: 'sbatch found; no slurm.* config (needed only for --backend slurm)',
          }
        : { name: 'slurm', status: 'info', detail: 'not installed (needed only for --backend slurm)' },
    ]
  }
  let engine: ReturnType<typeof slurmEngine>
  try {
    engine = slurmEngine(request.config.slurm, request.env)
  } catch (error) {
    return [{ name: 'slurm', status: 'fail', detail: error instanceof Error ? error.message : String(error) }]
  }
  const failed = (line: DoctorLine): DoctorLine =>
    line.status === 'fail' && !request.chosen ? { ...line, status: 'warn' } : line
  const lines = (await engine.checks()).map(failed)
  if (!request.submitTest || lines.some((line) => line.status !== 'ok')) return lines
  try {
    const spool = engine.openSpool(null)
    lines.push(
      failed(
        await engine.submitTest({
          spool,
          agentCommand: request.agentCommand,
          path: null,
          timeoutMs: 120_000,
        }),
      ),
    )
  } catch (error) {
    lines.push(
      failed({
        name: 'slurm submit-test',
        status: 'fail',
        detail: error instanceof Error ? error.message : String(error),
      }),
    )
  }
  return lines
}
