// `npm run bench`: times the built CLI against floors (the least any node program must do for the same job)
// and prints one table of medians and ratios. docs/performance.md says what is measured and why.
// A new benchmark is one more `section(...)` below; helpers live in bench/lib.mjs.
import { mkdirSync, realpathSync, rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  compare,
  machineFacts,
  median,
  output,
  peakRssMb,
  printedCount,
  printResults,
  recordComparison,
  recordMemory,
  recordSamples,
  section,
  timeCommand,
} from './lib.mjs'
import { liveFixtureProcesses, writeLivenessProjects } from './liveness.mjs'
import {
  AIMS,
  benchEnv,
  emptyExecutable,
  FLOOR_LIST as floorList,
  gitEnv,
  gitRepo,
  HARNESS as harness,
  middleSession,
  nativeBuilt,
  option,
  prepareStores,
  runtimes as runtimesOf,
} from './stores.mjs'

// Rows without a suffix are the node runtime's (bin/harness with HARNESS_RUNTIME=node); rows marked "native"
// the native executable's, through the same bin/harness, as a user runs it (docs/development/native.md).
const env = { ...benchEnv(), HARNESS_RUNTIME: 'node' }
/** [label suffix, environment] of each runtime to measure. */
const runtimes = runtimesOf(env).map(([runtime, runEnv]) => [
  runtime === 'node' ? '' : `, ${runtime}`,
  runEnv,
])
/** The runtime the sessions-at-scale rows use: what a user runs (the native executable, where it is built). */
const scaleRuntimes = nativeBuilt ? runtimes.filter(([suffix]) => suffix) : runtimes
if (!nativeBuilt) process.stderr.write('no dist/harness-native: the native rows are left out\n')

const work = realpathSync(await mkdtemp(join(tmpdir(), 'harness-bench-')))
const cleanUp = () => rmSync(work, { recursive: true, force: true })
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(signal, () => {
    cleanUp()
    process.exit(code)
  })
}

try {
  const facts = {
    ...machineFacts(),
    'node on PATH': (await output({ command: 'node', args: ['-v'] })).trim(),
  }
  console.log('Machine')
  for (const [key, value] of Object.entries(facts)) console.log(`  ${key.padEnd(13)} ${value}`)
  console.log()

  // Generated stores are kept between runs (bench/stores.mjs); `--counts 10000` limits the list rows to those.
  const listCounts = (option('counts') ?? '1000,10000,100000').split(',').map(Number)
  const { projects, seal } = prepareStores([...new Set([...listCounts, 10_000])])

  await section('list', async () => {
    // Each runtime over each store size; 100,000 records are judged against the same runtime's 10,000.
    for (const [runtime, runtimeEnv] of runtimesOf(env)) {
      const suffix = runtime === 'node' ? '' : `, ${runtime}`
      const medians = {}
      for (const count of listCounts) await listRow(count, runtime, suffix, runtimeEnv, medians)
    }
  })

  /** `session list --json` over `count` records against the floor; the 100,000 row also against 10,000. */
  async function listRow(count, runtime, suffix, runtimeEnv, medians) {
    const { dir, sessionsDir } = projects[count]
    const subject = { command: harness, args: ['session', 'list', '--json'], cwd: dir, env: runtimeEnv }
    const floor = {
      label: 'read+parse+print',
      command: 'node',
      args: [floorList, sessionsDir],
      cwd: dir,
      env,
    }
    // Both must produce every record, or the comparison means nothing.
    for (const spec of [subject, floor]) {
      const printed = printedCount(spec)
      if (printed !== count) throw new Error(`${spec.args.join(' ')} printed ${printed} records`)
    }
    const big = count === 100_000
    const row = await compare({
      label: `list --json, ${count.toLocaleString('en')} records${suffix}`,
      subject,
      floor,
      runs: big ? 3 : 9,
      warmup: big ? 1 : 2,
      aim: count === 10_000 ? AIMS[runtime].list : undefined,
    })
    medians[count] = row.median
    row.peakMb = await peakRssMb(subject)
    row.floorPeakMb = await peakRssMb(floor)
    if (big) {
      row.aimPeakMb = AIMS.list100kPeakMb
      if (medians[10_000]) {
        recordComparison({
          label: `list --json, 100,000 vs 10,000 records${suffix}`,
          ms: row.median,
          min: row.min,
          max: row.max,
          runs: row.runs,
          floorLabel: 'list 10,000 × 1',
          floorMs: medians[10_000],
          aim: AIMS.list100k,
        })
      }
    }
    process.stderr.write(
      `   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms, peak ${row.peakMb?.toFixed(0)} MB\n`,
    )
  }

  await section('stats', async () => {
    const { benchStats } = await import('./stats.mjs')
    const row = await benchStats({ harness, dir: projects[10_000].dir, env })
    process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`)
  })

  await section('liveness', async () => {
    // RUNNING records whose supervisors and agents are live processes, against the same records finished:
    // 200 (SPEC §9, "Aims at scale": ≤ 1.5×) and 1,000.
    const live = await liveFixtureProcesses(20)
    try {
      for (const [count, aim] of [
        [200, 1.5],
        [1000, 2],
      ]) {
        const { running, finished } = writeLivenessProjects(
          join(work, `liveness-${count}`),
          count,
          live,
          seal,
        )
        const subject = { command: harness, args: ['session', 'list', '--json'], cwd: running, env }
        const floor = { label: 'same, all finished', ...subject, cwd: finished }
        const printed = JSON.parse(await output(subject))
        const alive = printed.filter((s) => s.status === 'RUNNING' && s.liveness === 'running').length
        if (alive !== count) throw new Error(`${alive} of ${count} RUNNING sessions were shown running`)
        const row = await compare({
          label: `list --json, ${count.toLocaleString('en')} RUNNING (live)`,
          subject,
          floor,
          runs: 9,
          aim,
        })
        process.stderr.write(
          `   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`,
        )
      }
    } finally {
      for (const child of live) child.kill('SIGKILL')
    }
  })

  await section('start-up', async () => {
    const { dir, sessionsDir } = projects[10_000]
    const { id, worktree } = middleSession(sessionsDir)
    const expected = `${worktree}\n`
    const floor = { label: 'node -e 0', command: 'node', args: ['-e', '0'], cwd: dir, env }
    const startRow = async (label, subject, aim) => {
      const row = await compare({ label, subject, floor, runs: 30, warmup: 3, block: 10, aim })
      process.stderr.write(
        `   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`,
      )
    }
    // bun's own start: the floor under the native executable's rows (an empty program, compiled alike).
    const empty = nativeBuilt ? emptyExecutable(work) : null
    if (empty) await startRow('empty program, native', { command: empty, args: [], cwd: dir, env })
    for (const [runtime, runtimeEnv] of runtimesOf(env)) {
      const suffix = runtime === 'node' ? '' : `, ${runtime}`
      const subject = { command: harness, args: ['session', 'path', id], cwd: dir, env: runtimeEnv }
      const printed = await output(subject)
      if (printed !== expected) throw new Error(`session path printed ${JSON.stringify(printed)}`)
      const aims = AIMS[runtime]
      await startRow(`path <id>, 10,000 records${suffix}`, subject, aims.path)
      await startRow(
        `show <id>, 10,000 records${suffix}`,
        { ...subject, args: ['session', 'show', id] },
        aims.show,
      )
      await startRow(`--help${suffix}`, { ...subject, args: ['--help'] }, aims.help)
    }
  })

  await section('run-overhead', async () => {
    const dir = join(work, 'run-overhead')
    mkdirSync(dir)
    for (const [suffix, runtimeEnv] of runtimes) {
      const subject = {
        command: harness,
        args: ['run', '-q', '--no-worktree', '-a', 'exec', '--', 'true'],
        cwd: dir,
        env: runtimeEnv,
      }
      const floor = { label: 'true', command: 'true', args: [], cwd: dir, env }
      const row = await compare({
        label: `run --no-worktree -a exec -- true${suffix}`,
        subject,
        floor,
        runs: 15,
        aimOverheadMs: 80,
      })
      process.stderr.write(
        `   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`,
      )
    }
  })

  await section('run-worktree', async () => {
    // `harness run` in a git repository makes a worktree on a new branch; the floor is that `git worktree add`.
    const committer = gitEnv(env)
    const repo = gitRepo(join(work, 'run-worktree'), committer)
    for (const [suffix, runtimeEnv] of runtimes) {
      const row = await compare({
        label: `run -a exec -- true (worktree)${suffix}`,
        subject: {
          command: harness,
          args: ['run', '-q', '-a', 'exec', '--', 'true'],
          cwd: repo,
          env: gitEnv(runtimeEnv),
        },
        floor: {
          label: 'git worktree add -b',
          command: 'git',
          args: (n) => [
            'worktree',
            'add',
            '-q',
            '-b',
            `floor${suffix ? '-native' : ''}/${n}`,
            join(work, `floor-worktrees${suffix ? '-native' : ''}`, String(n)),
          ],
          cwd: repo,
          env: committer,
        },
        runs: 10,
        block: 5,
        aim: AIMS[suffix ? 'native' : 'node'].run,
      })
      process.stderr.write(
        `   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`,
      )
    }
  })

  await section('container', async () => {
    // A whole container session (worktree, private clone, create, attached start, collect, removal) against
    // `podman run --rm` of the same image alone; the image is the tests' (scripts/container-test-image.sh).
    const image = process.env.HARNESS_BENCH_IMAGE ?? 'localhost/harness-test:latest'
    const probe = await output({ command: 'podman', args: ['image', 'exists', image], env }).then(
      () => true,
      () => false,
    )
    if (!probe) {
      process.stderr.write(`   skipped: no podman, or no image ${image} (scripts/container-test-image.sh)\n`)
      return
    }
    const containerEnv = { ...gitEnv(env), HARNESS_AUTO_CLEANUP: 'off' }
    const repo = gitRepo(join(work, 'container'), containerEnv)
    const row = await compare({
      label: 'run --backend container -a exec -- true',
      subject: {
        command: harness,
        args: ['run', '-q', '--backend', 'container', '--image', image, '-a', 'exec', '--', 'true'],
        cwd: repo,
        env: containerEnv,
      },
      floor: {
        label: 'podman run --rm',
        command: 'podman',
        args: ['run', '--rm', '--network=none', image, 'true'],
        cwd: repo,
        env: containerEnv,
      },
      runs: 7,
      warmup: 1,
      aim: 1.3,
    })
    process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`)
  })

  await section('kill', async () => {
    // From starting `harness session kill` to its exit, which happens once KILLED is recorded; the agent
    // (`sleep`) obeys SIGTERM. Includes the CLI's own start-up.
    for (const [suffix, runtimeEnv] of runtimes) await killRow(suffix, runtimeEnv)
  })

  /** Kill latency under one runtime. */
  async function killRow(suffix, env) {
    const dir = join(work, `kill-latency${suffix ? '-native' : ''}`)
    mkdirSync(dir)
    const samples = []
    for (let i = 0; i < 11; i++) {
      const id = (
        await output({
          command: harness,
          args: ['run', '-q', '--no-worktree', '-d', '-a', 'exec', '--', 'sleep', '60'],
          cwd: dir,
          env,
        })
      ).trim()
      samples.push(await timeCommand({ command: harness, args: ['session', 'kill', id], cwd: dir, env }))
      const status = JSON.parse(
        await output({ command: harness, args: ['session', 'show', id, '--json'], cwd: dir, env }),
      ).status
      if (status !== 'KILLED') throw new Error(`session ${id} is ${status} after kill`)
    }
    const row = recordSamples({
      label: `kill → KILLED recorded (obedient agent)${suffix}`,
      samples,
      aimMs: 150,
      note: 'absolute',
    })
    process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms\n`)
  }

  await section('ui', async () => {
    // `harness ui` of 200 sessions: from its start to the first full frame on a terminal (bench/ui-open.mjs).
    const { fullFrame, floorArgv, openOnTerminal } = await import('./ui-open.mjs')
    const { dir } = prepareStores([200]).projects[200]
    for (const [suffix, runtimeEnv] of runtimes) {
      const samples = []
      const floor = []
      const open = (argv) => openOnTerminal({ argv, cwd: dir, env: runtimeEnv, done: fullFrame(200) })
      for (let i = 0; i < 2; i++) await open([harness, 'ui'])
      for (let i = 0; i < 15; i++) {
        samples.push(await open([harness, 'ui']))
        floor.push(await open(floorArgv(200)))
      }
      const row = recordSamples({
        label: `ui, 200 sessions: first full frame${suffix}`,
        samples,
        aimMs: suffix ? 300 : undefined,
        note: `terminal alone ${median(floor).toFixed(1)} ms`,
      })
      process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms\n`)
    }
  })

  await section('memory', async () => {
    // 100 sessions alive at once, detached and in tmux: the PSS of every process that exists because of harness
    // (supervisors, the tmux server), per session; then a kill of all 100 (bench/scale.mjs).
    const { benchMemory, scaleEnv, sweep } = await import('./scale.mjs')
    const count = Number(option('sessions') ?? 100)
    for (const [suffix, runtimeEnv] of scaleRuntimes) {
      for (const mode of ['detach', 'tmux']) {
        const dir = join(work, `memory-${mode}${suffix ? '-native' : ''}`)
        const scale = scaleEnv(runtimeEnv, join(work, `memory-env-${mode}${suffix ? '-native' : ''}`))
        try {
          const row = await benchMemory({
            harness,
            env: { ...scale, HARNESS_RUNTIME: runtimeEnv.HARNESS_RUNTIME },
            dir,
            count,
            mode,
            log: (line) => process.stderr.write(`   ${line}\n`),
          })
          recordMemory({
            label: `${count} sessions --${mode}: PSS per session${suffix}`,
            mb: row.perSessionMb,
            aimMb: 6,
            note: `idle CPU ${row.idleCpuMs.toFixed(1)} ms/s; load ${row.load.toFixed(1)}; all KILLED`,
          })
        } finally {
          sweep(dir, scale)
        }
      }
    }
  })

  await section('concurrent', async () => {
    // 200 detached sessions started at once, agents sleeping 1-5 s and exiting with chosen codes: 0 lost.
    const { benchConcurrent, scaleEnv, sweep } = await import('./scale.mjs')
    const count = Number(option('concurrent') ?? 200)
    for (const [suffix, runtimeEnv] of scaleRuntimes) {
      const dir = join(work, `concurrent${suffix ? '-native' : ''}`)
      const scale = scaleEnv(runtimeEnv, join(work, `concurrent-env${suffix ? '-native' : ''}`))
      try {
        const row = await benchConcurrent({
          harness,
          env: { ...scale, HARNESS_RUNTIME: runtimeEnv.HARNESS_RUNTIME },
          dir,
          count,
          log: (line) => process.stderr.write(`   ${line}\n`),
        })
        recordSamples({
          label: `${count} detached sessions at once: all started${suffix}`,
          samples: [row.startMs],
          note: `${row.lost} lost`,
        })
        if (row.lost > 0) process.exitCode = 1
      } finally {
        sweep(dir, scale)
      }
    }
  })

  await section('cleanup', async () => {
    const { benchCleanup } = await import('./cleanup.mjs')
    const { count, harnessMs, gitMs } = await benchCleanup({
      harnessBin: harness,
      log: (line) => process.stderr.write(`   ${line}\n`),
    })
    // Aim: dominated by git's own time, i.e. not much more than the git work alone.
    recordComparison({
      label: `cleanup, ${count.toLocaleString('en')} sessions with worktrees`,
      ms: harnessMs,
      floorLabel: 'rm+prune+update-ref',
      floorMs: gitMs,
      aim: 1.5,
    })
  })

  await section('checkpoint', async () => {
    const { benchCheckpoint } = await import('./checkpoint.mjs')
    for (const row of await benchCheckpoint({ harnessBin: harness })) {
      process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms (${row.ratio.toFixed(2)}×)\n`)
    }
  })

  console.log()
  printResults()
} finally {
  cleanUp()
}
