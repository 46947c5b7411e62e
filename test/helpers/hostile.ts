import { execFileSync } from 'node:child_process'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type FakeAgents, fakeAgents } from './agents.js'
import { type CliResult, cli } from './cli.js'
import { tmpDir, tmpUserIn } from './tmp.js'

/**
 * Projects that carry hostile files under `.harness/`, as a user gets them: a `git clone` of a repository that
 * committed them with `git add -f` (links travel in git), or a tarball unpacked with tar (FIFOs do too).
 * Beside the project: `outside/`, the user's own files that nothing may write, read, or remove.
 */
export interface HostileProject {
  root: string
  /** The project the user works in (the clone, or the folder the tarball was unpacked into). */
  dir: string
  home: string
  outside: string
  env: NodeJS.ProcessEnv
  agents: FakeAgents
  run: (
    args: string[],
    options?: { process?: boolean; timeoutMs?: number; env?: NodeJS.ProcessEnv },
  ) => Promise<CliResult>
  git: (...args: string[]) => string
}

export type HostileFile =
  | { kind: 'file'; path: string; content: string }
  | { kind: 'link'; path: string; target: string }
  | { kind: 'fifo'; path: string }

const OLD = '2025-01-01T10:00:00.000Z'

/** A record as an older version (or someone else) would have written it: unsealed, so foreign here. */
export function foreignRecord(id: string, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify(
    {
      id,
      provider: 'claude',
      permission: 'supervised',
      status: 'COMPLETED',
      created_at: OLD,
      completed_at: OLD,
      worktree_dir: '.',
      is_worktree: false,
      prompt: 'a task',
      ...extra,
    },
    null,
    2,
  )}\n`
}

function base(): Omit<HostileProject, 'dir' | 'run' | 'git' | 'agents'> & { origin: string } {
  const root = tmpDir()
  const { home, env } = tmpUserIn(root)
  const outside = join(root, 'outside')
  const origin = join(root, 'origin')
  mkdirSync(outside)
  mkdirSync(origin)
  return { root, home, outside, origin, env }
}

function plant(dir: string, files: readonly HostileFile[]): void {
  for (const file of files) {
    const path = join(dir, file.path)
    mkdirSync(dirname(path), { recursive: true })
    if (file.kind === 'file') writeFileSync(path, file.content)
    else if (file.kind === 'link') symlinkSync(file.target, path)
    else execFileSync('mkfifo', [path])
  }
}

function finish(b: ReturnType<typeof base>, dir: string, env: NodeJS.ProcessEnv = b.env): HostileProject {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  const agents = fakeAgents(b.home, env)
  const run: HostileProject['run'] = (args, options = {}) =>
    cli(args, {
      cwd: dir,
      env: { ...agents.env, ...options.env },
      process: options.process,
      timeoutMs: options.timeoutMs ?? 60_000,
    })
  return { root: b.root, dir, home: b.home, outside: b.outside, env, agents, run, git }
}

/** `git clone` of a repository whose `.harness/` (committed with `git add -f`) holds `files`. */
export function hostileClone(files: (outside: string) => readonly HostileFile[]): HostileProject {
  const b = base()
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: b.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  writeFileSync(join(b.origin, 'README.md'), '# project\n')
  plant(b.origin, files(b.outside))
  git(b.origin, 'init', '-q')
  git(b.origin, 'add', '-A')
  git(b.origin, 'add', '-f', '.harness')
  git(b.origin, 'commit', '-qm', 'a project with a hostile .harness')
  const dir = join(b.root, 'clone')
  git(b.root, 'clone', '-q', b.origin, dir)
  return finish(b, dir)
}

/** A git repository into which a tarball holding `.harness/` with `files` (FIFOs too) was unpacked. */
export function hostileTarball(files: (outside: string) => readonly HostileFile[]): HostileProject {
  const b = base()
  plant(b.origin, files(b.outside))
  const tarball = join(b.root, 'project.tar')
  execFileSync('tar', ['-cf', tarball, '-C', b.origin, '.harness'])
  const dir = join(b.root, 'project')
  mkdirSync(dir)
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, env: b.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  writeFileSync(join(dir, 'README.md'), '# project\n')
  git('init', '-q')
  git('add', '-A')
  git('commit', '-qm', 'init')
  execFileSync('tar', ['-xf', tarball, '-C', dir])
  return finish(b, dir)
}

/**
 * An agent's script that commits a nested repository (a gitlink) whose own config defines a clean filter and an
 * fsmonitor that write `pwned`, named by its `.gitattributes`, then leaves its file with a new mtime so that any
 * `git status` inside it would run the filter.
 */
export function nestedRepoWithFilter(pwned: string): string {
  return [
    'git init -q vendor/lib',
    'cd vendor/lib',
    `git config filter.evil.clean "sh -c 'echo clean >> ${pwned}; cat'"`,
    `git config core.fsmonitor "sh -c 'echo fsmonitor >> ${pwned}'"`,
    "echo '* filter=evil' > .gitattributes",
    'echo one > a.txt',
    'git -c filter.evil.clean=cat -c core.fsmonitor=false add -A',
    'git -c filter.evil.clean=cat -c core.fsmonitor=false commit -q -m nested',
    'cd ../..',
    'git -c core.fsmonitor=false add vendor/lib 2>/dev/null',
    'git -c core.fsmonitor=false commit -q -m "a nested repository"',
    'touch -d "2001-01-01 00:00:00" vendor/lib/a.txt',
  ].join('\n')
}
