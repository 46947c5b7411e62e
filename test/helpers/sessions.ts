import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { trustProject } from '../../src/trust.js'
import { sealRecord } from '../fixtures/records.js'
import type { TmpRepo } from './tmp.js'

export type SessionJson = Record<string, unknown> & {
  id: string
  status: string
  worktree_dir: string
  git_branch: string | null
  runs: Record<string, unknown>[]
}

/** What the backend tests read of a record that ran on a backend (its own part added by each). */
export interface BackendRecord {
  id: string
  status: string
  exit_code: number | null
  stop_reason?: string
  git_branch: string
  worktree_dir: string
}

export function recordPath(repo: TmpRepo, id: string): string {
  return join(repo.dir, '.harness', 'sessions', `${id}.json`)
}

export function logPath(repo: TmpRepo, id: string): string {
  return join(repo.dir, '.harness', 'logs', `${id}.log`)
}

/**
 * Writes a record by hand into `<projectDir>/.harness/sessions/<id>.json`, sealed with the key of the user of
 * `env` (as harness would have written it), or left unsealed (foreign) with `{ seal: false }`.
 */
export function writeRecord(
  projectDir: string,
  env: NodeJS.ProcessEnv,
  record: Record<string, unknown> & { id: string },
  options: { seal?: boolean; name?: string; pretty?: boolean } = {},
): string {
  const dir = join(projectDir, '.harness', 'sessions')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, options.name ?? `${record.id}.json`)
  const content = options.seal === false ? record : sealRecord(record, env, projectDir)
  writeFileSync(
    path,
    options.pretty === false ? JSON.stringify(content) : `${JSON.stringify(content, null, 2)}\n`,
  )
  return path
}

/**
 * Writes `<projectDir>/.harness/config.json` and trusts it for the user of `env`, as `harness trust` would
 * (an untrusted project config stops every command that would use it).
 */
export function writeProjectConfig(projectDir: string, env: NodeJS.ProcessEnv, config: unknown): string {
  const file = join(projectDir, '.harness', 'config.json')
  mkdirSync(join(projectDir, '.harness'), { recursive: true })
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config))
  trustProject(projectDir, file, env)
  return file
}

/** Reads a record from disk, changes it with `edit`, and writes it back sealed (as harness would). */
export function editRecord(repo: TmpRepo, id: string, edit: (record: SessionJson) => void): void {
  const record = JSON.parse(readFileSync(recordPath(repo, id), 'utf8')) as SessionJson
  edit(record)
  writeRecord(repo.dir, repo.env, record)
}

/** Rewrites a record's times so that its last activity (and creation) was `agoMs` before now. */
export function setLastActive(repo: TmpRepo, id: string, agoMs: number): void {
  editRecord(repo, id, (record) => {
    const when = new Date(Date.now() - agoMs).toISOString()
    record.created_at = new Date(Date.now() - agoMs - 1000).toISOString()
    record.completed_at = when
    record.updated_at = when
    for (const run of record.runs) {
      run.started_at = record.created_at
      run.ended_at = when
    }
  })
}

export function branchExists(repo: TmpRepo, name: string): boolean {
  return repo.git('branch', '--list', name) !== ''
}

/**
 * Everything cleanup could change, as text: git's worktrees, branches and refs, loose objects, and every
 * file under .harness (path, type, mode, content hash).
 */
export function stateOf(repo: TmpRepo): string {
  const lines = [
    repo.git('worktree', 'list', '--porcelain'),
    repo.git('branch', '-a', '-v', '--no-abbrev'),
    repo.git('for-each-ref'),
    repo.git('count-objects', '-v').replace(/^size.*$/m, ''),
  ]
  const walk = (dir: string) => {
    if (!existsSync(dir)) return
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      const stat = lstatSync(path)
      const rel = relative(repo.dir, path)
      if (stat.isDirectory()) {
        lines.push(`d ${rel} ${stat.mode.toString(8)}`)
        walk(path)
      } else {
        const hash = stat.isFile() ? createHash('sha256').update(readFileSync(path)).digest('hex') : ''
        lines.push(`f ${rel} ${stat.mode.toString(8)} ${stat.size} ${hash}`)
      }
    }
  }
  walk(join(repo.dir, '.harness'))
  return lines.join('\n')
}

/** A record as it is on disk now (no harness involved); throws when there is none. */
export function readRecord<T = SessionJson>(projectDir: string, id: string): T {
  return JSON.parse(readFileSync(join(projectDir, '.harness', 'sessions', `${id}.json`), 'utf8')) as T
}

/** A record as it is on disk now, or null while there is none. */
export function recordIfAny<T = SessionJson>(projectDir: string, id: string): T | null {
  try {
    return readRecord<T>(projectDir, id)
  } catch {
    return null
  }
}

/** Every record in a project's sessions folder, read straight from disk (no harness involved). */
export function readRecords<T = Record<string, unknown>>(projectDir: string): T[] {
  const sessions = join(projectDir, '.harness', 'sessions')
  if (!existsSync(sessions)) return []
  return readdirSync(sessions)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(sessions, f), 'utf8')) as T)
}

/**
 * A record's first run whose supervisor and agent are verifiably gone: pids no process has, start times ("1")
 * no process ever matches.
 */
export function goneRun(startedAt: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    n: 1,
    kind: 'start',
    pid: 999_999_990,
    pid_start_time: '1',
    supervisor_pid: 999_999_991,
    supervisor_start_time: '1',
    started_at: startedAt,
    ...extra,
  }
}
