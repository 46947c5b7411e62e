// What bench/run.mjs and bench/hyperfine.mjs both set up, so that the two time the same things in the same
// way: the environment, the runtimes, the generated record stores (the same seeded records every run, kept
// between runs under the system's temporary folder: 100,000 records take a minute to write), the session they
// time `path` and `show` on, and the git repository `run` makes its worktrees in.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findBun } from '../scripts/native.mjs'
import { writeProject } from './records.mjs'
import { sealerFor } from './seal.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
/** The `harness` a user runs: the launcher, which picks the runtime from HARNESS_RUNTIME. */
export const HARNESS = join(root, 'bin', 'harness')
/** The floor of `session list --json`: read, parse and print every record (docs/performance.md). */
export const FLOOR_LIST = join(root, 'bench', 'floor-list.cjs')

const STORES = join(tmpdir(), 'harness-bench-stores-v4')
/** Where harness finds the key the records are sealed with (through XDG_STATE_HOME). */
const STATE_HOME = join(STORES, 'state')

/**
 * The bench's environment: none of the user's own harness settings (HARNESS_*), which must not leak into the
 * measurement, no colour, and the key the stores' records are sealed with.
 */
export function benchEnv() {
  const env = { ...process.env, NO_COLOR: '1', XDG_STATE_HOME: STATE_HOME }
  for (const key of Object.keys(env)) if (key.startsWith('HARNESS_')) delete env[key]
  return env
}

/** Whether `npm run build` made the native executable here (the native runtime is measured only then). */
export const nativeBuilt = existsSync(join(root, 'dist', 'harness-native'))

/**
 * `[runtime, environment]` of each runtime to measure, node first: the same `bin/harness`, as a user runs it,
 * with HARNESS_RUNTIME set (docs/development/native.md).
 */
export function runtimes(env) {
  return ['node', ...(nativeBuilt ? ['native'] : [])].map((runtime) => [
    runtime,
    { ...env, HARNESS_RUNTIME: runtime },
  ])
}

/** `{ [count]: { dir, sessionsDir } }` for each count, writing the stores that are not there yet. */
export function prepareStores(counts, log = (line) => process.stderr.write(`${line}\n`)) {
  const seal = sealerFor(STATE_HOME)
  const projects = {}
  for (const count of counts) {
    const dir = join(STORES, `project-${count}`)
    const sessionsDir = join(dir, '.harness', 'sessions')
    const done = join(dir, 'complete')
    if (!existsSync(done)) {
      log(`writing ${count.toLocaleString('en')} records (kept in ${STORES})…`)
      rmSync(dir, { recursive: true, force: true })
      writeProject(dir, count, 42, seal)
      writeFileSync(done, `${count}\n`)
    }
    projects[count] = { dir, sessionsDir }
  }
  return { projects, seal }
}

/**
 * The session `path` and `show` are timed on: the middle one of a store's records, by id, and its worktree
 * folder, made here (`session path` checks that the folder exists).
 */
export function middleSession(sessionsDir) {
  const files = readdirSync(sessionsDir).sort()
  const id = files[Math.floor(files.length / 2)].replace(/\.json$/, '')
  const worktree = JSON.parse(readFileSync(join(sessionsDir, `${id}.json`), 'utf8')).worktree_dir
  mkdirSync(worktree, { recursive: true })
  return { id, worktree }
}

/** `base` with git's author and committer, for the repositories the bench commits in. */
export function gitEnv(base) {
  return {
    ...base,
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  }
}

/** A new git repository at `dir` with one commit on `main` (`env` from gitEnv). */
export function gitRepo(dir, env) {
  mkdirSync(dir, { recursive: true })
  const git = (...args) => execFileSync('git', args, { cwd: dir, env, stdio: 'ignore' })
  git('init', '-q', '-b', 'main')
  writeFileSync(join(dir, 'README.md'), '# bench\n')
  git('add', '-A')
  git('commit', '-qm', 'initial')
  return dir
}

/** The value of `--name value` on the command line, or undefined. */
export function option(name) {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? process.argv[at + 1] : undefined
}

/**
 * SPEC §9's aims, for both scripts: start-up against `node -e 0`, a listing of 10,000 records against the
 * read+parse+print floor, 100,000 records against the same runtime's 10,000 (time, and peak RSS in MB).
 */
export const AIMS = {
  native: { path: 0.12, show: 0.25, help: 0.12, list: 1.0, run: 1.3 },
  node: { path: 1.15, help: 1.15, list: 1.25, run: 1.3 },
  list100k: 11,
  list100kPeakMb: 300,
}

/**
 * bun's own start, the floor under the native executable's: an empty program compiled as the executable is
 * (scripts/native.mjs), written into `dir`; null without a bun for this platform.
 */
export function emptyExecutable(dir) {
  const bun = findBun()
  if (!bun) return null
  const source = join(dir, 'empty.ts')
  const executable = join(dir, 'empty-native')
  writeFileSync(source, '')
  execFileSync(bun, ['build', source, '--compile', '--bytecode', '--minify', '--outfile', executable], {
    stdio: 'ignore',
  })
  return executable
}
