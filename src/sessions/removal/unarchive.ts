import {
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fsyncDir } from '../../durable.js'
import { IllegalStateError, SessionNotFoundError, UsageError } from '../../errors.js'
import type { ArchivedSession } from '../../history/archive-file.js'
import { ensureProjectDirs, logPathFor } from '../../project.js'
import type { SessionEnv } from '../ports.js'
import { agentDirFor } from '../record/agent-files.js'

export interface RestoredSession {
  id: string
  record: string
  log: string | null
  agent_files: number
  refs: { ref: string; commit: string }[]
}

export interface UnarchiveReport {
  archive: string
  restored: RestoredSession[]
}

interface Restore {
  entry: ArchivedSession
  repo: string | null
  /** Refs to create (those already there at the same commit are left as they are). */
  refs: { ref: string; commit: string }[]
}

/**
 * `harness session unarchive <file> [id...]`: reads the whole archive through its verifier into a staging
 * folder first, checks that every chosen session can come back (its id free, its refs free or identical, its
 * bundle applicable), and only then restores, per session: git objects and refs, agent files, log, and the
 * record last, byte for byte. A bad archive or a refused session changes nothing (docs/history.md, "Archive").
 */
export async function unarchiveSessions(
  ctx: SessionEnv,
  file: string,
  ids: string[],
): Promise<UnarchiveReport> {
  const archive = resolve(ctx.cwd, file)
  if (!existsSync(archive)) {
    throw new UsageError(`${archive} does not exist`, 'name an archive written by "harness session archive"')
  }
  const paths = await ctx.project()
  const store = await ctx.store()
  const { readArchive, CorruptArchiveError } = await import('../../history/archive-file.js')
  const git = await import('../../git/bundle.js')
  const { hasCommit } = await import('../../git/common.js')
  const { applyRefs, listRefs } = await import('../../git/refs.js')
  // Staged beside the records when .harness exists; a bad archive must not even create it.
  const staging = mkdtempSync(join(paths.exists ? paths.harnessDir : tmpdir(), '.harness-unarchive-'))
  try {
    const manifest = await readArchive(archive, staging)
    for (const entry of manifest.sessions) {
      const problem = inconsistency(
        entry,
        manifest.members.map((m) => m.path),
      )
      if (problem) throw new CorruptArchiveError(archive, problem)
    }
    const chosen = ids.length
      ? ids.map((id) => {
          const entry = manifest.sessions.find((s) => s.id === id)
          if (!entry) throw new SessionNotFoundError(id)
          return entry
        })
      : manifest.sessions

    // Everything is checked before anything is restored.
    const plans: Restore[] = []
    for (const entry of chosen) {
      const id = entry.id
      if (store.exists(id)) {
        throw new IllegalStateError(
          `session "${id}" exists: an archived session is never restored over it`,
          `delete it first, or restore the others: harness session unarchive ${file} <id>...`,
          'SESSION_EXISTS',
        )
      }
      const log = logPathFor(paths.logsDir, id)
      const agentDir = agentDirFor(paths.harnessDir, id)
      for (const taken of [entry.log ? log : null, entry.agent_files.length ? agentDir : null]) {
        if (taken && existsSync(taken)) {
          throw new IllegalStateError(`${taken} exists: it is not overwritten`, undefined, 'ARCHIVE_CONFLICT')
        }
      }
      const repo = entry.refs.length ? repoFor(entry, paths.root) : null
      const refs: Restore['refs'] = []
      if (repo) {
        const existing = new Map<string, string>()
        for (const prefix of ['refs/heads/', `refs/harness/${id}/checkpoints/`]) {
          for (const [ref, commit] of await listRefs(repo, prefix, { env: ctx.env }))
            existing.set(ref, commit)
        }
        for (const ref of entry.refs) {
          const now = existing.get(ref.ref)
          if (now === ref.commit) continue
          if (now) {
            throw new IllegalStateError(
              `${ref.ref} exists in ${repo} at another commit (${now.slice(0, 12)}, archived ${ref.commit.slice(0, 12)})`,
              'rename or delete that branch first',
              'ARCHIVE_CONFLICT',
            )
          }
          refs.push(ref)
        }
        if (entry.bundle) await git.verifyBundle(repo, join(staging, entry.bundle), { env: ctx.env })
        else {
          for (const ref of refs) {
            if (!(await hasCommit(repo, ref.commit, { env: ctx.env }))) {
              throw new IllegalStateError(
                `commit ${ref.commit.slice(0, 12)} of ${ref.ref} is not in ${repo}`,
                undefined,
                'BUNDLE_UNUSABLE',
              )
            }
          }
        }
      }
      plans.push({ entry, repo, refs })
    }

    ensureProjectDirs(paths)
    const restored: RestoredSession[] = []
    for (const { entry, repo, refs } of plans) {
      const id = entry.id
      if (repo) {
        if (entry.bundle) await git.unbundleObjects(repo, join(staging, entry.bundle), { env: ctx.env })
        await applyRefs(
          repo,
          refs.map(({ ref, commit }) => ({ create: ref, commit })),
          { env: ctx.env },
        )
      }
      if (entry.agent_files.length) {
        for (const member of entry.agent_files) {
          const target = join(paths.harnessDir, member)
          mkdirSync(dirname(target), { recursive: true, mode: 0o700 })
          copyFileSync(join(staging, member), target, constants.COPYFILE_EXCL)
        }
      }
      let log: string | null = null
      if (entry.log) {
        log = logPathFor(paths.logsDir, id)
        mkdirSync(paths.logsDir, { recursive: true, mode: 0o700 })
        copyFileSync(join(staging, entry.log), log, constants.COPYFILE_EXCL)
        // On disk before the record that names it is.
        const fd = openSync(log, 'r')
        try {
          fsyncSync(fd)
        } finally {
          closeSync(fd)
        }
        fsyncDir(paths.logsDir)
      }
      await store.restore(id, readFileSync(join(staging, entry.record)))
      restored.push({
        id,
        record: store.recordPath(id),
        log,
        agent_files: entry.agent_files.length,
        refs: entry.refs,
      })
    }
    return { archive, restored }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** Why a manifest entry cannot be this session's own (names of another session, refs outside its own). */
function inconsistency(entry: ArchivedSession, members: string[]): string | null {
  const id = entry.id
  const listed = new Set(members)
  const own = [entry.record, entry.log, entry.bundle, ...entry.agent_files].filter(
    (m): m is string => m !== null,
  )
  if (entry.record !== `sessions/${id}.json`) return `session ${id}: its record is ${entry.record}`
  if (entry.log !== null && entry.log !== `logs/${id}.log`) return `session ${id}: its log is ${entry.log}`
  if (entry.bundle !== null && entry.bundle !== `git/${id}.bundle`)
    return `session ${id}: its bundle is ${entry.bundle}`
  if (entry.agent_files.some((m) => !m.startsWith(`agents/${id}/`)))
    return `session ${id}: agent files of another session`
  for (const member of own) if (!listed.has(member)) return `session ${id}: ${member} is not in the archive`
  for (const { ref } of entry.refs) {
    if (
      !(ref.startsWith('refs/heads/') || ref.startsWith(`refs/harness/${id}/checkpoints/`)) ||
      ref.includes('..')
    ) {
      return `session ${id}: ref ${ref} is not one harness archives`
    }
  }
  return null
}

/** The repository the refs go back to: the one they came from when it is still there, else the project's. */
function repoFor(entry: ArchivedSession, projectRoot: string): string {
  if (entry.repo && existsSync(entry.repo) && readdirSync(entry.repo).length) return entry.repo
  return projectRoot
}
