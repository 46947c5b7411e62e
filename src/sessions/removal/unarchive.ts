import { dirname, join, resolve } from 'node:path'
import {
  copyPlainFileNew,
  ensureDir,
  filesUnder,
  hashFile,
  linkFile,
  lstatOrNull,
  makeStagingDir,
  readBytes,
  readDirNames,
  removeHeldSync,
  tempName,
  unlinkQuiet,
  writeFileAtomic,
} from '../../disk/door.js'
import { asDiskFault, fsyncDir } from '../../durable.js'
import { IllegalStateError, SessionNotFoundError, shellWord, UsageError } from '../../errors.js'
import { unbundleObjects, verifyBundle } from '../../git/bundle.js'
import { hasCommit } from '../../git/common.js'
import { applyRefs, listRefs } from '../../git/refs.js'
import {
  type ArchivedSession,
  type ArchiveMember,
  CorruptArchiveError,
  type Manifest,
  readArchive,
} from '../../history/archive-file.js'
import { processExists } from '../../process/identity.js'
import { ensureProjectDirs, logPathFor, type ProjectPaths } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import { agentDirFor } from '../record/agent-files.js'
import { promptPathFor } from '../record/bounds.js'
import { FileLock } from '../record/lock.js'
import type { RecordStore } from '../record/record-store.js'

export interface RestoredSession {
  id: string
  record: string
  log: string | null
  agent_files: number
  refs: { ref: string; commit: string }[]
  /** Refs the manifest lists that the session does not own (not `harness/<id>` or its checkpoints): left out. */
  skipped_refs: string[]
}

export interface UnarchiveReport {
  archive: string
  restored: RestoredSession[]
}

interface Restore {
  entry: ArchivedSession
  /** Restored already by an interrupted run of this same archive (its record is there, byte for byte). */
  done: boolean
  /** Refs to create (those already there at the same commit are left as they are). */
  refs: { ref: string; commit: string }[]
  skippedRefs: string[]
  /** Members already in place with the archived bytes (left there by an interrupted run). */
  inPlace: Set<string>
}

/** What the restore needs at hand. */
interface Scope {
  ctx: SessionEnv
  paths: ProjectPaths
  store: RecordStore
  staging: string
  file: string
  members: Map<string, ArchiveMember>
}

/**
 * `harness session unarchive <file> [id...]` (docs/history.md, "Archive"; SPEC §10, "Archives are input"):
 * reads the whole archive through its verifier (sizes checked before anything is inflated) into a staging
 * folder under `.harness/tmp/`, checks that every chosen session can come back, and only then restores, per
 * session: git objects and the refs the session owns, in the current project's repository only (whatever the
 * manifest names), agent files, log, and the record last, byte for byte. A bad archive or a refused session
 * changes nothing; the staging folder goes whatever happens. A journal beside it marks a restore under way
 * until the staging is gone and `announce` has been given the report (the command prints it), so that running
 * the same command again after a crash or a kill at any point before that finishes it.
 */
export async function unarchiveSessions(
  ctx: SessionEnv,
  file: string,
  ids: string[],
  announce: (report: UnarchiveReport) => void,
): Promise<UnarchiveReport> {
  const archive = resolve(ctx.cwd, file)
  if (!lstatOrNull(archive)) {
    throw new UsageError(`${archive} does not exist`, 'name an archive written by "harness session archive"')
  }
  const paths = await ctx.project()
  const store = await ctx.store()
  // A bad archive must not even create .harness: without one, it is read through once before anything is made.
  if (!paths.exists) await readArchive(archive)
  ensureProjectDirs(paths)
  const tmp = join(paths.harnessDir, 'tmp')
  sweepStaleStaging(tmp)
  const key = (await hashFile(archive)).sha256.slice(0, 24)
  // One unarchive of an archive at a time: a second would take the first's journal for an interrupted run's
  // and race it for the same files. A holder that died (killed) is no obstacle: its lock is broken at once.
  const lock = await FileLock.acquire(join(tmp, `unarchive-${key}.lock`), {
    timeoutMs: 0,
    what: `the unarchive of ${shellWord(file)}`,
  })
  try {
    return await restoreJournaled(
      ctx,
      { paths, store, archive, file, ids },
      join(tmp, `unarchive-${key}.journal`),
      announce,
    )
  } finally {
    lock.release()
  }
}

/** The restore itself, under the archive's lock; its journal marks it under way until the report is out. */
async function restoreJournaled(
  ctx: SessionEnv,
  what: { paths: ProjectPaths; store: RecordStore; archive: string; file: string; ids: string[] },
  journal: string,
  announce: (report: UnarchiveReport) => void,
): Promise<UnarchiveReport> {
  const { paths, store, archive, file, ids } = what
  const resumed = lstatOrNull(journal) !== null
  const staging = makeStagingDir(join(paths.harnessDir, 'tmp'), `unarchive-${process.pid}-`)
  const report: UnarchiveReport = { archive, restored: [] }
  try {
    const manifest = await readArchive(archive, staging)
    const members = new Map(manifest.members.map((m) => [m.path, m]))
    const scope: Scope = { ctx, paths, store, staging, file, members }
    const plans: Restore[] = []
    for (const entry of chosenSessions(manifest, archive, ids))
      plans.push(await planRestore(scope, entry, resumed))
    if (!resumed) writeFileAtomic(journal, `${JSON.stringify({ archive, pid: process.pid })}\n`)
    for (const plan of plans) report.restored.push(await restoreSession(scope, plan))
  } finally {
    removeHeldSync(staging)
  }
  // The journal goes last, once the report is out: a run killed before it has said it is done is finished by
  // running it again (the journal lets it take the records as its own); one killed after has finished and said so.
  announce(report)
  unlinkQuiet(journal)
  return report
}

/** The sessions to restore (all, or those named), each checked to name only its own members. */
function chosenSessions(manifest: Manifest, archive: string, ids: string[]): ArchivedSession[] {
  const paths = manifest.members.map((m) => m.path)
  for (const entry of manifest.sessions) {
    const problem = inconsistency(entry, paths)
    if (problem) throw new CorruptArchiveError(archive, problem)
  }
  if (!ids.length) return manifest.sessions
  return ids.map((id) => {
    const entry = manifest.sessions.find((s) => s.id === id)
    if (!entry) throw new SessionNotFoundError(id)
    return entry
  })
}

/** Everything checked before anything is restored: the id, the files and the refs free (or already ours). */
async function planRestore(scope: Scope, entry: ArchivedSession, resumed: boolean): Promise<Restore> {
  const { paths, store, staging, file } = scope
  const id = entry.id
  const plan: Restore = { entry, done: false, refs: [], skippedRefs: [], inPlace: new Set() }
  if (store.exists(id)) {
    // An interrupted run of this very archive wrote this record last: the session is whole.
    if (
      resumed &&
      readBytes(store.recordPath(id), 'record').equals(readBytes(join(staging, entry.record), 'record'))
    ) {
      plan.done = true
      return plan
    }
    throw new IllegalStateError(
      `session "${id}" exists: an archived session is never restored over it`,
      `delete it first, or restore the others: harness session unarchive ${shellWord(file)} <id>...`,
      'SESSION_EXISTS',
    )
  }
  if (entry.log) await checkFree(scope, plan, logPathFor(paths.logsDir, id), entry.log)
  if (entry.prompt) await checkFree(scope, plan, promptPathFor(store.dir, id), entry.prompt)
  const agentDir = agentDirFor(paths.harnessDir, id)
  const archived = new Set(entry.agent_files)
  for (const rel of filesUnder(agentDir)) {
    if (!archived.has(`agents/${id}/${rel}`)) {
      throw new IllegalStateError(`${agentDir} exists: it is not overwritten`, undefined, 'ARCHIVE_CONFLICT')
    }
  }
  for (const member of entry.agent_files) await checkFree(scope, plan, join(paths.harnessDir, member), member)
  await planRefs(scope, plan)
  return plan
}

/** A target that exists is refused, unless it holds exactly the archived bytes (an interrupted run put it there). */
async function checkFree(scope: Scope, plan: Restore, target: string, member: string): Promise<void> {
  const there = lstatOrNull(target)
  if (!there) return
  const want = scope.members.get(member)
  if (there.isFile() && want && there.size === want.size && (await hashFile(target)).sha256 === want.sha256) {
    plan.inPlace.add(member)
    return
  }
  throw new IllegalStateError(`${target} exists: it is not overwritten`, undefined, 'ARCHIVE_CONFLICT')
}

/** The refs the session owns, in the project's own repository: free, or already at the archived commit. */
async function planRefs(scope: Scope, plan: Restore): Promise<void> {
  const { entry } = plan
  const id = entry.id
  const owned = entry.refs.filter((r) => ownsRef(id, r.ref))
  plan.skippedRefs = entry.refs.filter((r) => !ownsRef(id, r.ref)).map((r) => r.ref)
  if (!owned.length) return
  const { ctx, paths, staging } = scope
  const repo = paths.root
  const existing = new Map<string, string>()
  for (const prefix of [`refs/heads/harness/${id}`, `refs/harness/${id}/checkpoints/`]) {
    for (const [ref, commit] of await listRefs(repo, prefix, { env: ctx.env })) existing.set(ref, commit)
  }
  for (const ref of owned) {
    const now = existing.get(ref.ref)
    if (now === ref.commit) continue
    if (now) {
      throw new IllegalStateError(
        `${ref.ref} exists in ${repo} at another commit (${now.slice(0, 12)}, archived ${ref.commit.slice(0, 12)})`,
        'rename or delete that branch first',
        'ARCHIVE_CONFLICT',
      )
    }
    plan.refs.push(ref)
  }
  if (entry.bundle) {
    await verifyBundle(repo, join(staging, entry.bundle), { env: ctx.env })
    return
  }
  for (const ref of plan.refs) {
    if (!(await hasCommit(repo, ref.commit, { env: ctx.env }))) {
      throw new IllegalStateError(
        `commit ${ref.commit.slice(0, 12)} of ${ref.ref} is not in ${repo}`,
        undefined,
        'BUNDLE_UNUSABLE',
      )
    }
  }
}

/** The refs a session owns: its own `harness/<id>` branch and its checkpoints, nothing else. */
function ownsRef(id: string, ref: string): boolean {
  return ref === `refs/heads/harness/${id}` || new RegExp(`^refs/harness/${id}/checkpoints/\\d+$`).test(ref)
}

/** git objects and refs, agent files, log, then the record: each file put in place whole (a link from staging). */
async function restoreSession(scope: Scope, plan: Restore): Promise<RestoredSession> {
  const { ctx, paths, store, staging } = scope
  const { entry } = plan
  const id = entry.id
  const log = entry.log ? logPathFor(paths.logsDir, id) : null
  const restored = {
    id,
    record: store.recordPath(id),
    log,
    agent_files: entry.agent_files.length,
    refs: entry.refs.filter((r) => ownsRef(id, r.ref)),
    skipped_refs: plan.skippedRefs,
  }
  if (plan.done) return restored
  if (plan.refs.length) {
    // git runs in the project's own repository only; `git bundle unbundle` writes objects, never refs.
    if (entry.bundle) await unbundleObjects(paths.root, join(staging, entry.bundle), { env: ctx.env })
    const changes = plan.refs.map(({ ref, commit }) => ({ create: ref, commit }))
    await applyRefs(paths.root, changes, { env: ctx.env })
  }
  for (const member of entry.agent_files) {
    if (!plan.inPlace.has(member)) putInPlace(join(staging, member), join(paths.harnessDir, member))
  }
  if (entry.log && log && !plan.inPlace.has(entry.log)) {
    putInPlace(join(staging, entry.log), log)
    // On disk before the record that names it is.
    fsyncDir(paths.logsDir)
  }
  if (entry.prompt && !plan.inPlace.has(entry.prompt)) {
    putInPlace(join(staging, entry.prompt), promptPathFor(store.dir, id))
    // On disk before the record that names it is.
    fsyncDir(store.dir)
  }
  await store.restore(id, readBytes(join(staging, entry.record), 'record'))
  return restored
}

/**
 * Gives a staged (fsynced) file its final name in one step, never over anything: a hard link within `.harness/`,
 * or, across file systems, a copy to a temp name linked in. A kill leaves the file whole or absent.
 */
function putInPlace(staged: string, target: string): void {
  ensureDir(dirname(target))
  try {
    linkFile(staged, target)
    return
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw asDiskFault(error, target)
  }
  const temp = tempName(target)
  try {
    copyPlainFileNew(staged, temp)
    linkFile(temp, target)
  } catch (error) {
    throw asDiskFault(error, target)
  } finally {
    unlinkQuiet(temp)
  }
}

/**
 * Staging folders of archive and unarchive runs whose process is gone (killed mid-way) are removed, and so are
 * the temp files of journals and locks such a run was writing (`unarchive-<hash>.journal.<pid>-<random>.tmp`,
 * `unarchive-<hash>.lock.<pid>.<random>.tmp`).
 */
function sweepStaleStaging(tmp: string): void {
  for (const name of readDirNames(tmp)) {
    const folder = /^(?:un)?archive-(\d+)-/.exec(name)
    const tempFile =
      /^unarchive-[0-9a-f]+\.journal\.(\d+)-[0-9a-f]+\.tmp$/.exec(name) ??
      /^unarchive-[0-9a-f]+\.lock\.(\d+)\.[0-9a-z]+\.tmp$/.exec(name)
    const pid = Number((folder ?? tempFile)?.[1])
    if (!pid || processExists(pid)) continue
    const stat = lstatOrNull(join(tmp, name))
    if (folder && stat?.isDirectory()) removeHeldSync(join(tmp, name))
    else if (tempFile && stat?.isFile()) unlinkQuiet(join(tmp, name))
  }
}

/** Why a manifest entry cannot be this session's own (names of another session, refs git would misread). */
function inconsistency(entry: ArchivedSession, members: string[]): string | null {
  const id = entry.id
  const listed = new Set(members)
  const own = [entry.record, entry.prompt ?? null, entry.log, entry.bundle, ...entry.agent_files].filter(
    (m): m is string => m !== null,
  )
  if (entry.record !== `sessions/${id}.json`) return `session ${id}: its record is ${entry.record}`
  if (entry.prompt != null && entry.prompt !== `sessions/${id}.prompt`)
    return `session ${id}: its prompt file is ${entry.prompt}`
  if (entry.log !== null && entry.log !== `logs/${id}.log`) return `session ${id}: its log is ${entry.log}`
  if (entry.bundle !== null && entry.bundle !== `git/${id}.bundle`)
    return `session ${id}: its bundle is ${entry.bundle}`
  if (entry.agent_files.some((m) => !m.startsWith(`agents/${id}/`)))
    return `session ${id}: agent files of another session`
  for (const member of own) if (!listed.has(member)) return `session ${id}: ${member} is not in the archive`
  for (const { ref } of entry.refs) {
    if (!ref.startsWith('refs/') || ref.includes('..') || /[\s\0]/.test(ref)) {
      return `session ${id}: ref ${JSON.stringify(ref)} is not a ref name`
    }
  }
  return null
}
