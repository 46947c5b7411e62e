import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { type TmpRepo, tmpDir } from './tmp.js'

/**
 * What a job of the Slurm backend needs in its spool folder before it is submitted, made the way the backend
 * will make it (SPEC §14): the session's branch `harness/<id>` as a bundle, optionally the worktree's
 * uncommitted files as `refs/harness/<id>/worktree` in it, and the agent's folder as a tar.
 */
export function writeRunInputs(
  repo: TmpRepo,
  id: string,
  runDir: string,
  options: { uncommitted?: Record<string, string>; agentFiles?: Record<string, string> } = {},
): { branch: string; base: string } {
  const branch = `harness/${id}`
  if (!repo.git('branch', '--list', branch)) repo.git('branch', branch)
  const base = repo.git('rev-parse', `refs/heads/${branch}`)
  const refs = [`refs/heads/${branch}`]
  if (options.uncommitted) {
    // A commit on top of the branch whose tree holds the uncommitted files (as a snapshot of the worktree would).
    const index = join(tmpDir(), 'index')
    const env = { ...repo.env, GIT_INDEX_FILE: index }
    execFileSync('git', ['read-tree', base], { cwd: repo.dir, env })
    for (const [path, content] of Object.entries(options.uncommitted)) {
      const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], {
        cwd: repo.dir,
        env,
        input: content,
      })
        .toString()
        .trim()
      execFileSync('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], {
        cwd: repo.dir,
        env,
      })
    }
    const tree = execFileSync('git', ['write-tree'], { cwd: repo.dir, env }).toString().trim()
    const commit = repo.git('commit-tree', tree, '-p', base, '-m', 'worktree')
    repo.git('update-ref', `refs/harness/${id}/worktree`, commit)
    refs.push(`refs/harness/${id}/worktree`)
  }
  repo.git('bundle', 'create', '-q', join(runDir, 'in.bundle'), ...refs)
  if (options.uncommitted) repo.git('update-ref', '-d', `refs/harness/${id}/worktree`)
  if (options.agentFiles) {
    const folder = tmpDir()
    for (const [path, content] of Object.entries(options.agentFiles)) {
      mkdirSync(join(folder, path, '..'), { recursive: true })
      writeFileSync(join(folder, path), content)
    }
    execFileSync('tar', ['-C', folder, '-cf', join(runDir, 'agent-in.tar'), '.'])
  }
  return { branch, base }
}

/**
 * What came back in `out.bundle` (null when none was sent): its refs, fetched into `repo` under
 * `refs/came-back/` (the bundle builds on the branch's start, which only the repository has).
 */
export function readOutBundle(runDir: string, repo: TmpRepo): { refs: Map<string, string> } | null {
  const bundle = join(runDir, 'out.bundle')
  if (!existsSync(bundle)) return null
  const refs = new Map<string, string>()
  for (const line of repo.git('bundle', 'list-heads', bundle).split('\n').filter(Boolean)) {
    const [sha = '', ref = ''] = line.split(' ')
    refs.set(ref, sha)
  }
  repo.git(
    'fetch',
    '-q',
    bundle,
    ...[...refs.keys()].map((ref) => `+${ref}:refs/came-back/${ref.replace(/^refs\//, '')}`),
  )
  return { refs }
}

/** The files of `agent-out.tar` with their contents. */
export function readAgentTar(runDir: string): Map<string, string> {
  const dir = tmpDir()
  execFileSync('tar', ['-C', dir, '-xf', join(runDir, 'agent-out.tar')])
  const files = new Map<string, string>()
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files.set(relative(dir, path), readFileSync(path, 'utf8'))
  }
  return files
}

/** An executable script at `dir/name` (a test agent). */
export function writeAgent(dir: string, name: string, body: string): string {
  const path = join(dir, name)
  writeFileSync(path, `#!/bin/bash\n${body}\n`)
  chmodSync(path, 0o755)
  return path
}
