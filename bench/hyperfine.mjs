// `node bench/hyperfine.mjs`: the aims of SPEC §9 for the native executable and the node bundle, timed by
// hyperfine (an independent tool) on the same data, in the same environment, with the same commands as
// `npm run bench`, so that the two can be compared figure by figure (docs/performance.md). Needs a build
// (`npm run build`) and hyperfine on PATH. Options: `--only empty,path,show,help,list,list100k,run-worktree,kill,ui,container`
// (empty: bun's own start, an empty program compiled as the native executable is; list100k: 100,000 records,
// against the same runtime's 10,000, with peak RSS), `--runs N` (each side, per round), `--rounds N` (hyperfine
// times one command's runs in a block; rounds
// alternate the blocks of subject and floor, as the bench alternates single runs, so drifting load falls on
// both alike). Prints one line per figure: medians of the subject and its floor, and their ratio.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './lib.mjs'
import {
  AIMS,
  benchEnv,
  emptyExecutable,
  FLOOR_LIST,
  gitEnv,
  gitRepo,
  HARNESS as harness,
  middleSession,
  nativeBuilt,
  option,
  prepareStores,
  runtimes,
} from './stores.mjs'

const only = option('only')?.split(',')
const runs = Number(option('runs') ?? 10)
const rounds = Number(option('rounds') ?? 2)
const wanted = (name) => !only || only.includes(name)

const work = realpathSync(mkdtempSync(join(tmpdir(), 'harness-hyperfine-')))
/** The image of the container row: the tests' (scripts/container-test-image.sh). */
const IMAGE = process.env.HARNESS_BENCH_IMAGE ?? 'localhost/harness-test:latest'
const podmanImage = (env) => {
  try {
    execFileSync('podman', ['image', 'exists', IMAGE], { env, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const load = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ')

/**
 * Medians (ms) of `subject` and `floor` (`{ command, shell?, prepare? }`), each run `runs` times per round
 * with hyperfine, output to /dev/null (its default), `-N` (no shell) unless the command needs one.
 */
function time(cwd, runEnv, ...commands) {
  const samples = commands.map(() => [])
  const cpu = commands.map(() => [])
  for (let round = 0; round < rounds; round++) {
    commands.forEach((spec, i) => {
      const file = join(work, 'result.json')
      const args = [
        '--style',
        'none',
        '--warmup',
        String(spec.warmup ?? 2),
        '--runs',
        String(spec.runs ?? runs),
      ]
      args.push(...(spec.shell ? ['--shell', 'bash'] : ['-N']))
      if (spec.prepare) args.push('--prepare', spec.prepare)
      args.push('--export-json', file, spec.command)
      execFileSync('hyperfine', args, { cwd, env: runEnv, stdio: ['ignore', 'ignore', 'inherit'] })
      const [result] = JSON.parse(readFileSync(file, 'utf8')).results
      samples[i].push(...result.times.map((s) => s * 1000))
      cpu[i].push((result.user + result.system) * 1000)
    })
  }
  // CPU time (user + system, hyperfine's mean per round): what load on the machine changes least.
  lastCpu = cpu.map(median)
  return samples.map(median)
}
let lastCpu = []

/** Peak resident memory (MB) of one run of `command` (GNU time's maximum RSS). */
function peakRss(cwd, runEnv, command) {
  const [file, ...args] = command.split(' ')
  // GNU time writes to stderr, which is all that is kept (stdout, the listing, goes nowhere).
  const { stderr, status } = spawnSync('/usr/bin/time', ['-f', '%M', file, ...args], {
    cwd,
    env: runEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  if (status !== 0) throw new Error(`${command} failed (${status}): ${stderr.trim()}`)
  return (Number(stderr.trim().split('\n').pop()) / 1024).toFixed(0)
}

function report(label, subjectMs, floorLabel, floorMs, aim) {
  const ratio = floorMs ? subjectMs / floorMs : null
  const judged =
    aim === undefined
      ? ''
      : ratio === null
        ? subjectMs <= aim
          ? ' met'
          : ' MISSED'
        : ratio <= aim
          ? ' met'
          : ' MISSED'
  const against = floorMs ? `${floorMs.toFixed(1)} ms ${floorLabel}, ${ratio.toFixed(2)}×` : floorLabel
  // CPU time (user + system) beside the wall time: what the load of other work changes least.
  const [cpu, floorCpu] = lastCpu
  const cpuText = floorCpu
    ? `CPU ${cpu.toFixed(0)} / ${floorCpu.toFixed(0)} ms = ${(cpu / floorCpu).toFixed(2)}×`
    : `CPU ${cpu.toFixed(0)} ms`
  console.log(
    `${label.padEnd(28)} ${subjectMs.toFixed(1).padStart(8)} ms  (${against}; aim ${aim ?? '-'}${judged})  ${cpuText}  load ${load()}`,
  )
}

try {
  console.log(
    `hyperfine ${execFileSync('hyperfine', ['--version'], { encoding: 'utf8' }).trim().split(' ')[1]}, ${runs} runs × ${rounds} rounds, load ${load()}`,
  )
  const counts = [10_000, ...(wanted('list100k') ? [100_000] : [])]
  const { projects } = prepareStores(counts)
  const { dir, sessionsDir } = projects[10_000]
  const { id } = middleSession(sessionsDir)
  const nodeE0 = { command: 'node -e 0', warmup: 3 }
  // bun's own start, the floor under the native executable's (an empty program compiled alike).
  const empty = nativeBuilt && wanted('empty') ? emptyExecutable(work) : null
  if (empty) {
    const [subject, floor] = time(dir, benchEnv(), { command: empty, warmup: 3 }, nodeE0)
    report('empty program, native', subject, 'node -e 0', floor, undefined)
  }
  // The native executable's lines first, when it is built, then node's.
  for (const [runtime, runEnv] of runtimes(benchEnv()).reverse()) {
    const aims = AIMS[runtime]
    for (const [name, args] of [
      ['path', `session path ${id}`],
      ['show', `session show ${id}`],
      ['help', '--help'],
    ]) {
      if (!wanted(name)) continue
      const [subject, floor] = time(dir, runEnv, { command: `${harness} ${args}`, warmup: 3 }, nodeE0)
      report(`${name}, ${runtime}`, subject, 'node -e 0', floor, aims[name])
    }
    const listed = {}
    for (const count of counts) {
      if (!wanted(count === 10_000 ? 'list' : 'list100k')) continue
      const project = projects[count]
      const [subject, floor] = time(
        project.dir,
        runEnv,
        // 100,000 records take seconds a run: fewer of them.
        { command: `${harness} session list --json`, ...(count === 10_000 ? {} : { warmup: 1, runs: 2 }) },
        {
          command: `node ${FLOOR_LIST} ${project.sessionsDir}`,
          ...(count === 10_000 ? {} : { warmup: 1, runs: 2 }),
        },
      )
      listed[count] = subject
      const label = `list --json ${count.toLocaleString('en')}, ${runtime}`
      report(label, subject, 'floor-list.cjs', floor, count === 10_000 ? aims.list : undefined)
      if (count === 100_000) {
        const peak = peakRss(project.dir, runEnv, `${harness} session list --json`)
        const ratio = listed[10_000] ? (subject / listed[10_000]).toFixed(2) : '-'
        console.log(
          `${`  100,000 / 10,000, ${runtime}`.padEnd(28)} ${ratio}× (aim ${AIMS.list100k}); peak RSS ${peak} MB (aim ${AIMS.list100kPeakMb}; GNU time, one run)`,
        )
      }
    }
    if (wanted('run-worktree')) {
      const repo = gitRepo(join(work, `repo-${runtime}`), gitEnv(runEnv))
      // Each run needs a new branch and folder: bash's $$ differs from run to run (hyperfine subtracts the
      // shell's own start from both). harness picks a new id itself.
      const [subject, floor] = time(
        repo,
        gitEnv(runEnv),
        { command: `${harness} run -q -a exec -- true`, shell: true },
        { command: `git worktree add -q -b floor/$$ ${join(work, `floor-${runtime}`)}/$$`, shell: true },
      )
      report(`run with a worktree, ${runtime}`, subject, 'git worktree add', floor, aims.run)
    }
    if (wanted('ui')) {
      // `harness ui` of 200 sessions until its first full frame, on a terminal (bench/ui-open.mjs); the floor
      // is the same terminal and helper with `printf` of the frame's marks. Their difference is the opening.
      const ui = prepareStores([200]).projects[200].dir
      const helper = `node ${join(import.meta.dirname, 'ui-open.mjs')} 200 --`
      const [subject, floor] = time(
        ui,
        runEnv,
        { command: `${helper} ${harness} ui` },
        { command: `${helper} printf 'harness ui · 200 sessions … q quit\\n'` },
      )
      report(
        `ui 200 (open − floor ${(subject - floor).toFixed(1)} ms), ${runtime}`,
        subject,
        'terminal alone',
        floor,
      )
    }
    if (wanted('kill')) {
      const folder = join(work, `kill-${runtime}`)
      mkdirSync(folder)
      // Before each run a background session of `sleep 60` (obeys SIGTERM); the run is the kill, to KILLED.
      const idFile = join(folder, 'id')
      const [subject] = time(folder, runEnv, {
        command: `read -r id < ${idFile} && ${harness} session kill "$id"`,
        shell: true,
        warmup: 1,
        prepare: `${harness} run -q --no-worktree -d -a exec -- sleep 60 > ${idFile}`,
      })
      report(`kill → KILLED, ${runtime}`, subject, 'absolute', null, 150)
    }
    if (wanted('container') && runtime === 'native' && podmanImage(runEnv)) {
      // A whole container session against `podman run --rm` of the same image, as bench/run.mjs's row.
      const containerEnv = { ...gitEnv(runEnv), HARNESS_AUTO_CLEANUP: 'off' }
      const repo = gitRepo(join(work, 'repo-container'), containerEnv)
      const [subject, floor] = time(
        repo,
        containerEnv,
        { command: `${harness} run -q --backend container --image ${IMAGE} -a exec -- true`, warmup: 1 },
        { command: `podman run --rm --network=none ${IMAGE} true`, warmup: 1 },
      )
      report('container start, native', subject, 'podman run --rm', floor, 1.3)
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
