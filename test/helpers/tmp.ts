import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isolatedEnvAt } from '../../bench/isolated-env.mjs'

const created: string[] = []

/** Removes the folders made so far; run after every test file (test/helpers/file-setup.ts). */
export function removeTmpDirs(): void {
  if (process.env.HARNESS_KEEP_TMP) return
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/** A fresh directory (real path: macOS /tmp is a symlink), removed after the test file. */
export function tmpDir(prefix = 'harness-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  created.push(dir)
  return dir
}

/** Environment that isolates git and harness from the user's configuration (bench/isolated-env.mjs). */
export function isolatedEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    // HARNESS_RUNTIME stays: the runtime under test, which `harness` on PATH (bin/harness) runs (global-setup.ts).
    ...isolatedEnvAt(home, 'Test', ['HARNESS_RUNTIME']),
    // No daily background cleanup after each test's first run: test/e2e/auto-cleanup.test.ts turns it on.
    HARNESS_AUTO_CLEANUP: 'off',
    ...extra,
  }
}

export interface TmpRepo {
  /** The repository's top directory. */
  dir: string
  home: string
  env: NodeJS.ProcessEnv
  git: (...args: string[]) => string
  write: (path: string, content: string) => void
}

/**
 * A session's worktree as harness makes one: `<repo>/.harness/worktrees/<id>` on a new branch `harness/<id>`
 * at HEAD, made by git. Returns its folder.
 */
export function sessionWorktree(repo: TmpRepo, id: string): string {
  const dir = join(repo.dir, '.harness', 'worktrees', id)
  repo.git('worktree', 'add', '-q', '-b', `harness/${id}`, dir)
  return dir
}

/**
 * Repositories made once per test process with `git init` (and the first commit), copied for each test: a
 * copy costs no process, where making one costs three git runs.
 */
const templates = new Map<boolean, string>()

function templateRepo(commit: boolean): string {
  const cached = templates.get(commit)
  if (cached) return cached
  // Outside `created`: it outlives every test file of this process. Under vitest it sits in the run's folder,
  // which the global teardown removes (global-setup.ts); the exit hook below covers other callers.
  const root = realpathSync(mkdtempSync(join(process.env.HARNESS_TEST_TEMPLATES ?? tmpdir(), 'template-')))
  const home = join(root, 'home')
  const dir = join(root, 'repo')
  mkdirSync(home)
  mkdirSync(dir)
  writeFileSync(join(home, '.gitconfig'), GITCONFIG)
  const env = isolatedEnv(home)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' })
  git('init', '-q')
  if (commit) {
    writeFileSync(join(dir, 'README.md'), '# test repo\n')
    git('add', '-A')
    git('commit', '-q', '-m', 'initial')
  }
  process.once('exit', () => rmSync(root, { recursive: true, force: true }))
  templates.set(commit, dir)
  return dir
}

// No automatic maintenance: after a commit git would start `git maintenance run --auto` (about a hundred extra
// git processes over the suite) to pack repositories that live for one test.
const GITCONFIG = '[init]\n\tdefaultBranch = main\n[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n'

/** A real git repository with one commit on `main`, and an isolated HOME/git config. */
export function tmpGitRepo(options: { commit?: boolean } = {}): TmpRepo {
  const root = tmpDir()
  const home = join(root, 'home')
  const dir = join(root, 'repo')
  mkdirSync(home)
  cpSync(templateRepo(options.commit !== false), dir, { recursive: true })
  const env = isolatedEnv(home)
  writeFileSync(join(home, '.gitconfig'), GITCONFIG)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' }).trim()
  const write = (path: string, content: string) => {
    const full = join(dir, path)
    mkdirSync(join(full, '..'), { recursive: true })
    writeFileSync(full, content)
  }
  return { dir, home, env, git, write }
}

export interface TmpUser {
  home: string
  env: NodeJS.ProcessEnv
  /** git as this user in `cwd`; its output, trimmed. */
  git: (cwd: string, ...args: string[]) => string
}

/**
 * A user of their own in `root` (a fresh folder: a temp one, or one on a small disk): `<root>/home` with git's
 * configuration, the isolated environment, and git run as them in any folder.
 */
export function tmpUserIn(root: string): TmpUser {
  const home = join(root, 'home')
  mkdirSync(home)
  writeFileSync(join(home, '.gitconfig'), GITCONFIG)
  const env = isolatedEnv(home)
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  return { home, env, git }
}

/** The isolated environment of the test project at `projectDir` (made by tmpGitRepo or tmpPlainDir). */
export function projectEnv(projectDir: string): NodeJS.ProcessEnv {
  return isolatedEnv(join(projectDir, '..', 'home'))
}

/** A plain directory (no git) with an isolated HOME. */
export function tmpPlainDir(): { dir: string; home: string; env: NodeJS.ProcessEnv } {
  const root = tmpDir()
  const home = join(root, 'home')
  const dir = join(root, 'work')
  mkdirSync(home)
  mkdirSync(dir)
  return { dir, home, env: isolatedEnv(home) }
}
