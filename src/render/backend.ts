import type { SessionView } from '../sessions/query/reconcile.js'
import type { SessionRecord } from '../sessions/record/schema.js'

/* What `show` says of where a session ran (docs/backends.md): its container, its Slurm job, its work collected. */

/** A container session's container: engine, short id, image, network. */
export function containerLine(session: SessionRecord): string | undefined {
  const c = session.container
  return c ? `${c.engine} ${c.id.slice(0, 12)}, image ${c.image}, network ${c.network}` : undefined
}

/** A Slurm session's job: its id, cluster, submit time and the node it ran on. */
export function slurmLine(session: SessionView): string | undefined {
  const s = session.slurm
  if (!s) return undefined
  return `${s.job_id} on cluster ${s.cluster}, submitted ${s.submit_time} UTC${s.node ? `, ran on ${s.node}` : ''}`
}

/** How a container's or a job's work came back (docs/backends.md); a failure says where it is kept. */
export function collectedLine(session: SessionView): string | undefined {
  const collected = (session.container?.collected ?? session.slurm?.collected) as
    | { kind: string; reason?: string; commits?: number; ref?: string; files?: unknown }
    | undefined
  if (!collected) return undefined
  const kept = session.container?.git_dir ?? `its run's folder in ${session.slurm?.spool ?? 'the spool'}`
  switch (collected.kind) {
    case 'failed':
      return `FAILED: ${collected.reason ?? 'unknown'}; the work is kept in ${kept} and "harness session collect ${session.id}" (or the next resume) brings it back first`
    case 'fast-forward':
      return `${collected.commits ?? 0} commit(s) onto ${session.git_branch ?? 'its branch'}${filesNote(collected.files)}`
    case 'diverged':
      return `history rewritten inside: kept under ${collected.ref ?? 'refs/harness/<id>/container'}, the branch not moved`
    case 'none':
      return `no new commits${filesNote(collected.files)}`
    default:
      return collected.kind
  }
}

/** What became of a job's uncommitted files (slurm). */
function filesNote(files: unknown): string {
  if (files === 'applied') return '; its uncommitted files are in the worktree'
  if (files && typeof files === 'object' && 'kept' in files) {
    return `; its uncommitted files are kept under ${String((files as { kept: unknown }).kept)}`
  }
  return ''
}
