// The layering rules of docs/development/design.md ("Layers"): the domain (sessions/, git/, process/, providers/) never
// imports the CLI (app/, cli/, commands/), never does its own terminal I/O or reads the environment, and git is
// run only by src/git/, a pid's liveness read only by process/identity.ts. The CLI itself reaches the process's streams, environment and directory only through
// cli/io.ts (and the small entry, which runs as the process before anything else), so that a command runs the
// same against any CliIo. render/ is pure: it imports no node: module. And no import closes a cycle, between
// modules or between folders (scripts/import-cycles.mjs). Checked by test/unit/layers.test.ts.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'

const CLI = ['app', 'cli', 'commands']
/** process.* that only the CLI's context may touch: the domain gets them through its ports. */
const PROCESS_IO: [string, string][] = [
  ['stdout', 'writes'],
  ['stderr', 'writes'],
  ['stdin', 'reads'],
  ['env', 'reads'],
]
/** The CLI files that stand for the process itself: main.ts's io, and the small entry bin/harness runs first. */
const PROCESS_ENTRIES = ['cli/io.ts', 'cli/fast-entry.ts']
/** The files that are a process's entry point. */
const ENTRIES = ['main.ts', 'native-main.ts']
const GIT_SPAWN =
  /\b(?:execa|execaSync|execaNode|execFile|execFileSync|spawn|spawnSync|exec|execSync)\(\s*['"`]git\b/
/**
 * A process's liveness and identity are read by process/identity.ts alone (the process table by process/tree.ts):
 * a probe `process.kill(pid, 0)` or a read of `/proc/<pid>` anywhere else is a second, drifting answer. The
 * door's `/proc/self/fd` (an open folder's path) is not about a process.
 */
const PID_PROBE = /\bprocess\.kill\(\s*[^,()]+,\s*0\s*\)/
const PROC_READ = /['"`]\/proc(?!\/self\/fd\b)(?:\/|['"`])/
const PROCESS_READERS = ['process/identity.ts', 'process/tree.ts']

/**
 * SPEC §10, "One door to the disk" (docs/security.md): only the door opens files. The door is the folder disk/
 * (disk/door.ts its entry, which every other module imports). A module may import node:fs itself only if it
 * never touches `.harness/` or a path a record, manifest or config names: each is named here with what it does
 * use fs for.
 */
export const FS_DOOR = 'disk/'
export const FS_ALLOWED: Record<string, string> = {
  'durable.ts': "the door's durable writer (all bytes, fsync), injectable for the disk-fault tests",
  'process/identity.ts': "reads /proc/<pid>/stat and the host's boot id, never a project's files",
  'process/tree.ts': 'reads /proc to find a process tree',
  'process/pipes.ts': 'writes to file descriptors it was given (the terminal, pipes)',
  'sessions/run/tmux-run.ts': 'closes a file descriptor it was given',
  'process/supervisor.ts': 'writes to its own descriptors; finds executables on PATH',
  'sessions/backends/container/engine.ts': 'finds the container engine (podman, docker) on PATH',
}
/**
 * SPEC §10, "What comes back from an agent is input" (docs/security.md): git is pointed at a git directory
 * other than the repository's own (`--git-dir`, the location variables, `fetch`, `clone`, `bundle`) only by the
 * modules named here, each with why; what an agent's git directory holds comes back only through the
 * quarantine. And `git add`, which goes into nested repositories whatever it is told, runs only in git/stage.ts.
 */
export const GIT_ELSEWHERE_ALLOWED: Record<string, string> = {
  'git/git.ts': "strips git's location variables from every environment",
  'git/quarantine.ts': 'the quarantine repository harness makes, and the fetch from it into the repository',
  'git/container-git.ts': 'makes the private clone from the repository (git never reads it back)',
  'git/bundle.ts': "archives: bundles of the repository's own refs, unbundled into the repository",
}
const POINTS_GIT_ELSEWHERE =
  /['"`]--git-dir\b|\bGIT_(?:DIR|COMMON_DIR|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES)\b|['"`](?:fetch|clone|bundle)['"`]/
const GIT_ADD_CALL = /\.(?:run|try|text|lines|fields|check)\(\s*\[\s*(?:\.\.\.[\w.]+,\s*)?['"`]add['"`]/

/**
 * Modules that still import node:fs for paths the door should own, not yet routed through it (docs/security.md
 * lists them): the list may only shrink; a new module cannot join it without this file saying so.
 */
export const FS_NOT_YET_ROUTED: string[] = []
const FS_MODULE = /^(?:node:)?fs(?:\/promises)?$/
/** Code that reaches harness's folder: its names for it, or the name itself as a path part. */
const NAMES_HARNESS_DIR = /\b(?:harnessDir|sessionsDir|HARNESS_DIR_NAME|pathsFor)\b|['"`]\.harness['"`/]/

/**
 * SPEC §14 "The seam": where a session runs is asked of its backend, and only the picker
 * (sessions/backends/index.ts) reads a backend's name; nothing outside sessions/backends/ compares anything with
 * `local`, `container` or `slurm`, nor looks at a record's `backend` to decide.
 */
const BACKENDS_ROOM = 'sessions/backends/'
const BACKEND_NAME_TEST =
  /[=!]==?\s*['"`](?:local|container|slurm)['"`]|['"`](?:local|container|slurm)['"`]\s*[=!]==?|\bcase\s+['"`](?:local|container|slurm)['"`]|\.backend\s*[=!]==?|[=!]==?\s*[\w.?]*\.backend\b/

/**
 * SPEC §4: reading commands read. The modules of `list`, `show`, `path`, `wait` and `logs` (the query room, the
 * wait service, their command files) reach a backend only through `readerOf`, whose acting operations are not
 * there; they never settle, stop, collect or destroy, and write a record nowhere but in the one write a read may
 * make: the stale → PAUSED reconciliation of query/reconcile.ts.
 */
export const READ_MODULES = [
  'sessions/query/',
  'sessions/control/wait.ts',
  'commands/session/list.ts',
  'commands/session/show.ts',
  'commands/session/path.ts',
  'commands/session/wait.ts',
  'commands/session/logs.ts',
]
const THE_ONE_WRITE = 'sessions/query/reconcile.ts'
const ACTING =
  /\b(?:backendOf|backendNamed|settleSession|settleEnded|settleIfEnded|collectSessions|actEnv|actEnvOf|stopSession|recoverSessions|resumeSession|startSession)\b|backends\/settle\.js|control\/(?:settle|stop|recover)\.js/
const RECORD_WRITE = /(?<!\bObject)\.(?:update|create|delete|restore|claim|quarantine)\(/

/** Drops comments, so that a comment may name what it does not do. */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:\\'"`])\/\/.*$/gm, '$1')
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sourceFiles(path)
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) yield path
  }
}

/** The violations under `srcDir`, as `{ file, rule }` with `file` relative to it (forward slashes). */
export interface LayerProblem {
  file: string
  rule: string
}

export function checkLayers(srcDir: string): LayerProblem[] {
  const problems: LayerProblem[] = []
  for (const path of sourceFiles(srcDir)) {
    const file = relative(srcDir, path).split(sep).join('/')
    const top = file.split('/')[0] ?? ''
    const code = stripComments(readFileSync(path, 'utf8'))
    const report = (rule: string) => {
      if (!problems.some((p) => p.file === file && p.rule === rule)) problems.push({ file, rule })
    }
    if (top !== 'git' && GIT_SPAWN.test(code)) report('git is run outside src/git/')
    if (!file.startsWith(BACKENDS_ROOM) && BACKEND_NAME_TEST.test(code)) {
      report(
        "tests a backend's name outside sessions/backends/ (ask the backend: its picker and its supports)",
      )
    }
    if (READ_MODULES.some((read) => file.startsWith(read))) {
      if (ACTING.test(code))
        report('a reading command reaches an acting operation (settle, stop, collect...)')
      if (file !== THE_ONE_WRITE && RECORD_WRITE.test(code)) report('a reading command writes a record')
    }
    if (top === 'git' && !(file in GIT_ELSEWHERE_ALLOWED) && POINTS_GIT_ELSEWHERE.test(code)) {
      report(
        'points git at another git directory (what an agent wrote comes back only through git/quarantine.ts)',
      )
    }
    if (top === 'git' && file !== 'git/stage.ts' && GIT_ADD_CALL.test(code)) {
      report('runs git add outside git/stage.ts (it would go into nested repositories)')
    }
    if (file !== 'process/identity.ts' && PID_PROBE.test(code)) {
      report('probes a pid itself (process/identity.ts says whether a process lives)')
    }
    if (!PROCESS_READERS.includes(file) && PROC_READ.test(code)) {
      report('reads /proc itself (process/identity.ts reads process identity)')
    }
    const importsFs = [
      ...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*)['"]([^'"]+)['"]/g),
    ].some(([, specifier]) => FS_MODULE.test(specifier ?? ''))
    if (
      importsFs &&
      !file.startsWith(FS_DOOR) &&
      !(file in FS_ALLOWED) &&
      !FS_NOT_YET_ROUTED.includes(file)
    ) {
      report(`imports node:fs (files are opened only through ${FS_DOOR}door.ts)`)
    }
    // An allowed module's reason is that it never touches `.harness/`: one that names it is not allowed fs.
    if (importsFs && file in FS_ALLOWED && NAMES_HARNESS_DIR.test(code)) {
      report(`imports node:fs and names .harness (only ${FS_DOOR}door.ts opens harness's files)`)
    }
    if (CLI.includes(top) && !PROCESS_ENTRIES.includes(file)) {
      for (const [name, verb] of [...PROCESS_IO, ['cwd', 'reads'] as const]) {
        if (new RegExp(`\\bprocess\\.${name}\\b`).test(code))
          report(`${verb} process.${name} (not through CliIo)`)
      }
    }
    // Everything else is below the CLI: the domain (sessions/, git/, process/, providers/, history/), render/
    // and the files at the top (config.ts, trust.ts, ...); only the entries (main.ts, and native-main.ts, the
    // native executable's) stand for the process.
    if (CLI.includes(top) || ENTRIES.includes(file)) continue
    const specifiers = code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g)
    for (const [, specifier] of specifiers) {
      if (!specifier?.startsWith('.')) continue
      const target = relative(srcDir, resolve(dirname(path), specifier)).split(sep)[0] ?? ''
      if (CLI.includes(target)) report(`imports ${target}/`)
    }
    for (const [name, verb] of PROCESS_IO) {
      if (new RegExp(`\\bprocess\\.${name}\\b`).test(code)) report(`${verb} process.${name}`)
    }
    if (top === 'render' && /(?:\bfrom\s*|\bimport\s*\(\s*)['"]node:/.test(code))
      report('imports a node: module')
    if (/\bconsole\.\w+\(/.test(code)) report('writes to the console')
  }
  return problems
}

/** What scripts/import-cycles.mjs prints for `srcDir` (each cycle a list of names, the first repeated last). */
export interface ImportCycles {
  modules: string[][]
  folders: string[][]
  /** The script's exit status: 1 when there is any cycle. */
  status: number | null
}

/**
 * What scripts/import-cycles.mjs finds in `srcDir`: run as a process, as `npm`/CI would (its output and exit
 * status), or, for the synthetic trees, its own function called in this worker (no second TypeScript load).
 */
export async function importCycles(srcDir: string, how: 'process' | 'in-process'): Promise<ImportCycles> {
  if (how === 'in-process') {
    const { findCycles } = (await import(
      new URL('../../scripts/import-cycles.mjs', import.meta.url).href
    )) as {
      findCycles(dir: string): Omit<ImportCycles, 'status'>
    }
    const found = findCycles(srcDir)
    return { ...found, status: found.modules.length + found.folders.length > 0 ? 1 : 0 }
  }
  const script = join(import.meta.dirname, '../../scripts/import-cycles.mjs')
  const run = spawnSync(process.execPath, [script, srcDir, '--json'], { encoding: 'utf8' })
  if (run.error) throw run.error
  if (run.stderr) throw new Error(`import-cycles.mjs: ${run.stderr}`)
  const found = JSON.parse(run.stdout) as Omit<ImportCycles, 'status'>
  return { ...found, status: run.status }
}

/**
 * Functions over 80 lines in modules other work is splitting at the same time, as `<file>:<name>`: the list may
 * only shrink (each one listed must still be long), and no other long function is let through. Pure data tables
 * are not here: scripts/long-functions.mjs allows those itself (its ALLOWED).
 */
export const LONG_NOT_YET_SPLIT: string[] = []

/** What scripts/long-functions.mjs prints for `srcDir` (paths relative to it). */
export interface TooLong {
  functions: { file: string; line: number; name: string; lines: number }[]
  files: { file: string; lines: number }[]
  /** The script's exit status: 1 when anything is too long. */
  status: number | null
}

/**
 * What scripts/long-functions.mjs finds in `srcDir` (judging files against `designFile`, else
 * `<src>/../docs/development/design.md`): as a process, or its own function called in this worker (see importCycles).
 */
export async function tooLong(
  srcDir: string,
  how: 'process' | 'in-process',
  designFile?: string,
): Promise<TooLong> {
  if (how === 'in-process') {
    const script = (await import(new URL('../../scripts/long-functions.mjs', import.meta.url).href)) as {
      tooLong(dir: string, design?: string): Omit<TooLong, 'status'>
    }
    const found = script.tooLong(srcDir, designFile)
    return { ...found, status: found.functions.length || found.files.length ? 1 : 0 }
  }
  const script = join(import.meta.dirname, '../../scripts/long-functions.mjs')
  const args = [script, srcDir, '--json', ...(designFile ? ['--design', designFile] : [])]
  const run = spawnSync(process.execPath, args, { encoding: 'utf8' })
  if (run.error) throw run.error
  if (run.stderr) throw new Error(`long-functions.mjs: ${run.stderr}`)
  const found = JSON.parse(run.stdout) as Omit<TooLong, 'status'>
  return { ...found, status: run.status }
}
