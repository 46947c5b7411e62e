// `node bench/hyperfine.mjs`: the aims of SPEC §9 for the native executable and the node bundle, timed by
// hyperfine (an independent tool) on the same data, in the same environment, with the same commands as
// `npm run bench`, so that the two can be compared figure by figure (docs/performance.md). Needs a build
// (`npm run build`) and hyperfine on PATH. Options: `--only path,show,help,list,run-worktree,kill,ui`,
// `--runs N` (each side, per round), `--rounds N` (hyperfine times one command's runs in a block; rounds
// alternate the blocks of subject and floor, as the bench alternates single runs, so drifting load falls on
// both alike). Prints one line per figure: medians of the subject and its floor, and their ratio.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { median } from './lib.mjs'
import {
  benchEnv,
  FLOOR_LIST,
  gitEnv,
  gitRepo,
  HARNESS as harness,
  middleSession,
  option,
  prepareStores,
  runtimes,
} from './stores.mjs'

const only = option('only')?.split(',')
const runs = Number(option('runs') ?? 10)
const rounds = Number(option('rounds') ?? 2)
const wanted = (name) => !only || only.includes(name)

const work = realpathSync(mkdtempSync(join(tmpdir(), 'harness-hyperfine-')))
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
      const args = ['--style', 'none', '--warmup', String(spec.warmup ?? 2), '--runs', String(runs)]
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
  const { projects } = prepareStores([10_000])
  const { dir, sessionsDir } = projects[10_000]
  const { id } = middleSession(sessionsDir)
  const nodeE0 = { command: 'node -e 0', warmup: 3 }
  // The native executable's lines first, when it is built, then node's.
  for (const [runtime, runEnv] of runtimes(benchEnv()).reverse()) {
    const aims =
      runtime === 'native'
        ? { path: 0.35, show: 0.6, help: 0.4, run: 1.5 }
        : { path: 1.15, help: 1.15, run: 1.2 }
    for (const [name, args] of [
      ['path', `session path ${id}`],
      ['show', `session show ${id}`],
      ['help', '--help'],
    ]) {
      if (!wanted(name)) continue
      const [subject, floor] = time(dir, runEnv, { command: `${harness} ${args}`, warmup: 3 }, nodeE0)
      report(`${name}, ${runtime}`, subject, 'node -e 0', floor, aims[name])
    }
    if (wanted('list')) {
      const [subject, floor] = time(
        dir,
        runEnv,
        { command: `${harness} session list --json` },
        { command: `node ${FLOOR_LIST} ${sessionsDir}` },
      )
      report(`list --json 10,000, ${runtime}`, subject, 'floor-list.cjs', floor, 1.25)
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
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
