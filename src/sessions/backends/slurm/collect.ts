import { dirname, join } from 'node:path'
import {
  closeFd,
  ensureDir,
  fdSize,
  openLogForAppend,
  openRead,
  readBytesAt,
  writeAll,
} from '../../../disk/door.js'
import { IllegalStateError } from '../../../errors.js'
import { type ChangedFiles, filesModified as changed } from '../../../git/diff.js'
import { collectJobBundle } from '../../../git/quarantine.js'
import { logPathFor } from '../../../project.js'
import { agentDirFor } from '../../record/agent-files.js'
import { filesModified } from '../../record/outcome.js'
import type { SessionRecord, SlurmFacts } from '../../record/schema.js'
import type { ActEnv, CollectEnv } from '../backend.js'
import { unpackAgentFiles } from './agent-files.js'
import { RUN_FILES } from './job-script.js'
import { type RunReport, readRunReport, sessionSpoolDir } from './spool.js'

/** The run folder in the spool of the record's latest job (its sealed facts: the spool folder and the run). */
export function runDirOf(id: string, facts: Pick<SlurmFacts, 'spool' | 'run'>): string {
  return join(sessionSpoolDir({ root: dirname(facts.spool), userDir: facts.spool }, id), `run-${facts.run}`)
}

/** The job's report, or null when its files cannot be read (refused by the door: a link, a FIFO, too big). */
export function reportOf(runDir: string): RunReport | null {
  try {
    return readRunReport(runDir)
  } catch {
    return null
  }
}

/**
 * A job's work brought back once it ended (docs/backends.md, "The Slurm backend"): its commits and uncommitted
 * files through the quarantine (src/git/quarantine.ts), its agent folder (agent-files.ts), its output appended to
 * the session's log. Returns what the record gains, written with the run's outcome in one update: how the work
 * came back (`slurm.collected`: a failure keeps the run folder and makes the run's success a `collect-failed`),
 * the node it ran on, and where the run's output begins in the log.
 */
export async function collectJob(
  record: SessionRecord,
  env: CollectEnv,
): Promise<(current: SessionRecord) => SessionRecord> {
  const facts = record.slurm
  if (!facts) return (current) => current
  const runDir = runDirOf(record.id, facts)
  const report = reportOf(runDir)
  const tempDir = join(env.harnessDir, 'tmp')
  const collected = await collectWork(record, facts, runDir, report, env)
  if (report?.sent?.agentFiles) {
    await unpackAgentFiles(runDir, RUN_FILES.agentOut, agentDirFor(env.harnessDir, record.id), tempDir).catch(
      () => {},
    )
  }
  const files = collected.kind === 'failed' ? undefined : await changedFiles(record, env)
  const logStart = appendJobLog(
    join(runDir, RUN_FILES.log),
    logPathFor(join(env.harnessDir, 'logs'), record.id),
  )
  const runN = facts.run
  return (current) => {
    if (current.slurm?.job_id !== facts.job_id || current.slurm.cluster !== facts.cluster) return current
    return {
      ...current,
      ...(files ? filesModified(files) : {}),
      slurm: { ...current.slurm, ...(report?.node ? { node: report.node } : {}), collected },
      runs: (current.runs ?? []).map((run) =>
        run.n === runN && logStart !== null ? { ...run, log_offset: logStart } : run,
      ),
    }
  }
}

/** The paths the session changed against its base, once the job's work is back in the worktree (as a local run's). */
async function changedFiles(record: SessionRecord, env: CollectEnv): Promise<ChangedFiles | undefined> {
  if (!record.is_worktree || !record.base_commit) return undefined
  try {
    return await changed(record.worktree_dir, record.base_commit, { env: env.env, signal: env.signal })
  } catch {
    return undefined // a removed worktree must not keep the outcome from being recorded
  }
}

async function collectWork(
  record: SessionRecord,
  facts: SlurmFacts,
  runDir: string,
  report: RunReport | null,
  env: CollectEnv,
): Promise<{ kind: string; [key: string]: unknown }> {
  const branch = record.git_branch
  if (!record.is_worktree || !branch) return { kind: 'none' }
  const sent = report?.sent
  if (!sent) return { kind: 'failed', reason: `the job sent nothing back (no "sent" file in ${runDir})` }
  if (sent.commits === 'failed')
    return { kind: 'failed', reason: `the job could not bundle its work (${runDir})` }
  return collectJobBundle({
    repoDir: record.base_dir ?? dirname(env.harnessDir),
    worktreeDir: record.worktree_dir,
    id: record.id,
    job: {
      runDir,
      name: RUN_FILES.bundleOut,
      branch,
      startTip: facts.start_tip,
      startTree: facts.start_tree,
      uncommitted: sent.uncommitted,
      empty: sent.commits === 'none',
    },
    tempDir: join(env.harnessDir, 'tmp'),
    env: env.env,
    signal: env.signal,
  })
}

/**
 * Appends the job's output (its `--output` in the spool: the agent's writing, read through the door in pieces)
 * to the session's log; where it begins there, or null when there was none to copy.
 */
function appendJobLog(from: string, to: string): number | null {
  let source: { fd: number; size: number }
  try {
    source = openRead(from)
  } catch {
    return null
  }
  ensureDir(dirname(to))
  const fd = openLogForAppend(to)
  try {
    const start = fdSize(fd)
    for (let position = 0; position < source.size; ) {
      const chunk = readBytesAt(source.fd, Math.min(1024 * 1024, source.size - position), position)
      if (chunk.length === 0) break
      writeAll(fd, chunk, to)
      position += chunk.length
    }
    return start
  } finally {
    closeFd(fd)
    closeFd(source.fd)
  }
}

/**
 * Before a resume (and in `session collect`): the work of a job whose collection failed, tried again; while it
 * still cannot come back the resume is refused (exit 4) and the run folder that holds it is kept.
 */
export async function recollectJob(record: SessionRecord, env: ActEnv): Promise<void> {
  const facts = record.slurm
  if (facts?.collected?.kind !== 'failed') return
  const runDir = runDirOf(record.id, facts)
  const collected = await collectWork(record, facts, runDir, reportOf(runDir), env)
  await env.store.update(record.id, (current) =>
    current.slurm?.job_id === facts.job_id
      ? { ...current, slurm: { ...current.slurm, collected } }
      : undefined,
  )
  if (collected.kind !== 'failed') return
  throw new IllegalStateError(
    `the work of session "${record.id}"'s last job is not back yet: ${String(collected.reason)}`,
    `it is kept in ${runDir}; once that is fixed, "harness session resume ${record.id}" brings it back first`,
    'UNCOLLECTED_WORK',
  )
}
