// `npm run bench`: times the built CLI against floors (the least any node program must do for the same job)
// and prints one table of medians and ratios. docs/performance.md says what is measured and why.
// A new benchmark is one more `section(...)` below; helpers live in bench/lib.mjs.
import { mkdirSync, realpathSync, rmSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  compare,
  machineFacts,
  output,
  printResults,
  recordComparison,
  recordSamples,
  section,
  timeCommand,
} from './lib.mjs'
import { writeProject } from './records.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const harness = join(root, 'bin', 'harness')
const floorList = join(root, 'bench', 'floor-list.cjs')

// The user's own harness settings must not leak into the measurement.
const env = { ...process.env, NO_COLOR: '1' }
for (const key of Object.keys(env)) if (key.startsWith('HARNESS_')) delete env[key]

const work = realpathSync(await mkdtemp(join(tmpdir(), 'harness-bench-')))
const cleanUp = () => rmSync(work, { recursive: true, force: true })
process.on('SIGINT', () => {
  cleanUp()
  process.exit(130)
})

try {
  const facts = {
    ...machineFacts(),
    'node on PATH': (await output({ command: 'node', args: ['-v'] })).trim(),
  }
  console.log('Machine')
  for (const [key, value] of Object.entries(facts)) console.log(`  ${key.padEnd(13)} ${value}`)
  console.log()

  const projects = {}
  for (const count of [1000, 10_000]) {
    const dir = join(work, `project-${count}`)
    projects[count] = { dir, ...writeProject(dir, count) }
  }

  await section('session list --json', async () => {
    for (const count of [1000, 10_000]) {
      const { dir, sessionsDir } = projects[count]
      const subject = { command: harness, args: ['session', 'list', '--json'], cwd: dir, env }
      const floor = {
        label: 'read+parse+print',
        command: 'node',
        args: [floorList, sessionsDir],
        cwd: dir,
        env,
      }
      // Both must produce every record, or the comparison means nothing.
      for (const spec of [subject, floor]) {
        const printed = JSON.parse(await output(spec))
        if (printed.length !== count)
          throw new Error(`${spec.args.join(' ')} printed ${printed.length} records`)
      }
      const row = await compare({
        label: `list --json, ${count.toLocaleString('en')} records`,
        subject,
        floor,
        runs: 9,
        aim: count === 10_000 ? 2 : undefined,
      })
      process.stderr.write(
        `   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`,
      )
    }
  })

  await section('session path', async () => {
    const { dir, records } = projects[10_000]
    const target = records[Math.floor(records.length / 2)]
    const subject = { command: harness, args: ['session', 'path', target.id], cwd: dir, env }
    const floor = { label: 'node -e 0', command: 'node', args: ['-e', '0'], cwd: dir, env }
    const printed = await output(subject)
    if (printed !== `${target.worktree_dir}\n`)
      throw new Error(`session path printed ${JSON.stringify(printed)}`)
    const row = await compare({
      label: 'path <id>, 10,000 records',
      subject,
      floor,
      runs: 31,
      warmup: 3,
      aim: 1.5,
    })
    process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`)
  })

  await section('run overhead', async () => {
    const dir = join(work, 'run-overhead')
    mkdirSync(dir)
    const subject = {
      command: harness,
      args: ['run', '-q', '--no-worktree', '-a', 'exec', '--', 'true'],
      cwd: dir,
      env,
    }
    const floor = { label: 'true', command: 'true', args: [], cwd: dir, env }
    const row = await compare({
      label: 'run --no-worktree -a exec -- true',
      subject,
      floor,
      runs: 15,
      aimOverheadMs: 150,
    })
    process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms vs ${row.floorMedian.toFixed(1)} ms\n`)
  })

  await section('kill latency', async () => {
    // From starting `harness session kill` to its exit, which happens once KILLED is recorded; the agent
    // (`sleep`) obeys SIGTERM. Includes the CLI's own start-up.
    const dir = join(work, 'kill-latency')
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
      label: 'kill → KILLED recorded (obedient agent)',
      samples,
      aimMs: 300,
      note: 'absolute',
    })
    process.stderr.write(`   ${row.label}: ${row.median.toFixed(1)} ms\n`)
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
      floorLabel: 'git remove+branch -D',
      floorMs: gitMs,
      aim: 1.5,
    })
  })

  console.log()
  printResults()
} finally {
  cleanUp()
}
