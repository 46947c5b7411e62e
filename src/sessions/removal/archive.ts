import { dirname, join, resolve } from 'node:path'
import {
  copyPlainFileNew,
  ensureDir,
  filesUnder,
  hashFile,
  linkFile,
  lstatOrNull,
  makeStagingDir,
  removeHeldSync,
  unlinkQuiet,
  writeFileNew,
} from '../../disk/door.js'
import { asDiskFault, fsyncDir } from '../../durable.js'
import { UsageError } from '../../errors.js'
import { createBundle } from '../../git/bundle.js'
import { hasCommit } from '../../git/common.js'
import { listRefs } from '../../git/refs.js'
import {
  ARCHIVE_FORMAT,
  type ArchivedSession,
  MANIFEST,
  type Manifest,
  readArchive,
  writeArchive,
} from '../../history/archive-file.js'
import type { SessionEnv, RecordStore as SessionStore } from '../ports.js'
import { agentDirFor } from '../record/agent-files.js'
import { promptPathFor } from '../record/bounds.js'
import type { SessionRecord, SessionStatus } from '../record/schema.js'
import {
  configuredOlderThan,
  emptyRemovalReport,
  keptSession,
  planSessions,
  reportResult,
  selectOldSessions,
} from './cleanup.js'
import { classifyError, decideRemoval, type Verdict } from './decision.js'
import { executeRemovals, type RemovalCandidate } from './executor.js'
import type { ProgressReporter } from './progress.js'
import type { RemovalReport } from './report.js'
import { type SessionPlan, sessionCandidate } from './session-plan.js'

declare const HARNESS_VERSION: string

export interface ArchiveOptions {
  olderThan?: { text: string; ms: number }
  status?: SessionStatus[]
  force: boolean
  dryRun: boolean
  /** The folder the archive goes to (default `.harness/archives/`). */
  output?: string
  now?: Date
  progress?: ProgressReporter
}

export interface ArchiveReport extends RemovalReport {
  /** The archive written (under --dry-run: that would be), or null when no session was to be archived. */
  archive: {
    path: string
    sessions: string[]
    /** null under --dry-run. */
    bytes: number | null
    sha256: string | null
  } | null
}

interface Chosen {
  plan: SessionPlan
  candidate: RemovalCandidate
  verdict: Verdict
}

/**
 * `harness session archive`: the sessions cleanup would remove, chosen by the same rules and the same
 * keep/remove decision, are packed into one verified tar.gz (docs/history.md, "Archive"); only once the
 * archive has been written, fsynced and read back good does the removal executor remove them, as cleanup does.
 */
export async function archiveSessions(ctx: SessionEnv, options: ArchiveOptions): Promise<ArchiveReport> {
  if (options.status?.includes('RUNNING')) {
    throw new UsageError('archive never takes RUNNING sessions', 'stop them first: harness session kill <id>')
  }
  const paths = await ctx.project()
  const olderThan = options.olderThan ?? (await configuredOlderThan(ctx))
  const report: ArchiveReport = { ...emptyRemovalReport(options.dryRun, olderThan), archive: null }
  if (!paths.exists) return report
  const store = await ctx.store()
  const selected = await selectOldSessions(ctx, store, options, olderThan.ms)
  report.skipped = selected.skipped
  const plans = await planSessions(ctx, paths, selected.candidates, options)
  const chosen: Chosen[] = []
  for (const [index, plan] of plans.entries()) {
    const record = selected.candidates[index] as SessionRecord
    // A planning failure is kept as an error: the command exits 1 once the others are done, as cleanup does.
    if (plan instanceof Error) report.kept.push(keptSession(record, null, [classifyError(plan)]))
    else {
      const verdict = decideRemoval(plan.reasons, options.force)
      if (verdict.action === 'keep') report.kept.push(keptSession(record, plan, plan.reasons))
      else chosen.push({ plan, candidate: sessionCandidate(plan), verdict })
    }
  }
  if (chosen.length === 0) return report

  const outputDir = resolve(ctx.cwd, options.output ?? join(paths.harnessDir, 'archives'))
  const now = options.now ?? new Date(ctx.clock.now())
  const ids = chosen.map((c) => c.plan.record.id)
  if (options.dryRun) {
    report.archive = { path: archiveName(outputDir, now), sessions: ids, bytes: null, sha256: null }
  } else {
    report.archive = await writeSessionArchive(store, paths.harnessDir, outputDir, now, chosen, ctx.env)
  }

  // The same batched removal as cleanup's (docs/development/design.md, "Removal").
  const results = await executeRemovals(
    chosen.map(({ candidate, verdict }) => ({ candidate, verdict })),
    { dryRun: options.dryRun, store, env: ctx.env },
  )
  for (const [index, { plan }] of chosen.entries()) {
    const result = results[index]
    if (result) reportResult(report, plan.record, plan, result)
  }
  return report
}

/** `harness-archive-<UTC time>.tar.gz` in `dir`, with a counter when that name is taken. */
function archiveName(dir: string, now: Date): string {
  const time = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
  for (let n = 1; ; n++) {
    const path = join(dir, `harness-archive-${time}${n === 1 ? '' : `-${n}`}.tar.gz`)
    if (!lstatOrNull(path)) return path
  }
}

/**
 * Stages every member (copies of the record, log and agent files; a git bundle of the branch and checkpoint
 * refs) in a folder under `.harness/tmp/`, packs them with their manifest to a temp name, fsyncs and reads it
 * back through the verifier, and only then gives it its final name. Throws (a full disk: DISK_FULL) and
 * leaves nothing behind when any step fails.
 */
async function writeSessionArchive(
  store: SessionStore,
  harnessDir: string,
  outputDir: string,
  now: Date,
  chosen: Chosen[],
  env: NodeJS.ProcessEnv,
): Promise<NonNullable<ArchiveReport['archive']>> {
  ensureDir(outputDir)
  const staging = makeStagingDir(join(harnessDir, 'tmp'), `archive-${process.pid}-`)
  const temp = join(outputDir, `.harness-archive-${process.pid}-${Date.now()}.tmp`)
  try {
    const members: string[] = []
    const sessions: ArchivedSession[] = []
    for (const { plan } of chosen)
      sessions.push(await stageSession(store, harnessDir, staging, plan, members, env))
    const manifest: Manifest = {
      format: ARCHIVE_FORMAT,
      version: 1,
      created_at: now.toISOString(),
      harness_version: typeof HARNESS_VERSION === 'string' ? HARNESS_VERSION : '0.0.0-dev',
      sessions,
      members: [],
    }
    for (const path of members) manifest.members.push({ path, ...(await hashFile(join(staging, path))) })
    writeFileNew(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`)
    await writeArchive(temp, staging, manifest)
    await readArchive(temp)
    const final = archiveName(outputDir, now)
    try {
      linkFile(temp, final)
    } catch (error) {
      throw asDiskFault(error, final)
    }
    unlinkQuiet(temp)
    fsyncDir(outputDir)
    const { sha256, size } = await hashFile(final)
    return { path: final, sessions: sessions.map((s) => s.id), bytes: size, sha256 }
  } finally {
    removeHeldSync(staging)
    unlinkQuiet(temp)
  }
}

/** Copies one session's files into `staging` and bundles its refs there; returns its manifest entry. */
async function stageSession(
  store: SessionStore,
  harnessDir: string,
  staging: string,
  plan: SessionPlan,
  members: string[],
  env: NodeJS.ProcessEnv,
): Promise<ArchivedSession> {
  const { record } = plan
  const id = record.id
  const copy = (from: string, member: string) => {
    ensureDir(dirname(join(staging, member)))
    copyPlainFileNew(from, join(staging, member))
    members.push(member)
  }
  const entry: ArchivedSession = {
    id,
    repo: plan.repo?.dir ?? null,
    refs: [],
    bundle: null,
    record: `sessions/${id}.json`,
    log: null,
    agent_files: [],
  }
  copy(store.recordPath(id), entry.record)
  // A long prompt's file beside the record (sessions/record/bounds.ts) goes with it.
  const prompt = promptPathFor(store.dir, id)
  if (record.prompt_file && lstatOrNull(prompt)?.isFile()) {
    entry.prompt = `sessions/${id}.prompt`
    copy(prompt, entry.prompt)
  }
  if (lstatOrNull(plan.log)?.isFile()) {
    entry.log = `logs/${id}.log`
    copy(plan.log, entry.log)
  }
  const agentDir = agentDirFor(harnessDir, id)
  for (const rel of filesUnder(agentDir)) {
    const member = `agents/${id}/${rel}`
    copy(join(agentDir, rel), member)
    entry.agent_files.push(member)
  }
  const repo = plan.repo?.dir
  if (repo) await stageRefs(repo, staging, plan, entry, members, env)
  return entry
}

/** The session's branch and checkpoint refs, and a bundle of their commits beyond the base. */
async function stageRefs(
  repo: string,
  staging: string,
  plan: SessionPlan,
  entry: ArchivedSession,
  members: string[],
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const { record } = plan
  const id = record.id
  if (plan.branch) entry.refs.push({ ref: `refs/heads/${plan.branch.name}`, commit: plan.branch.tip })
  const named = new Set((record.checkpoints ?? []).map((c) => c.ref))
  if (named.size) {
    const refs = await listRefs(repo, `refs/harness/${id}/checkpoints/`, { env })
    for (const [ref, commit] of refs) if (named.has(ref)) entry.refs.push({ ref, commit })
  }
  if (!entry.refs.length) return
  const base = record.base_commit
  // The base stays in the repository: the bundle holds only the session's own commits.
  const exclude = base && (await hasCommit(repo, base, { env })) ? base : null
  const member = `git/${id}.bundle`
  ensureDir(join(staging, 'git'))
  const refNames = entry.refs.map((r) => r.ref)
  if (await createBundle(repo, join(staging, member), refNames, exclude, { env })) {
    entry.bundle = member
    members.push(member)
  }
}
