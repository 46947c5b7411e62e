// `npm run bench:slurm` (root, Slurm's daemons installed): sessions on a throw-away Slurm test cluster
// (scripts/slurm-test-cluster.sh), against bare `sbatch` of the same agent (docs/performance.md).
//  - submit to running: from the command's start until the agent has started on a node (it writes a file
//    the submit host sees), for `harness run --backend slurm --detach` and for `sbatch` of a script that
//    runs the same agent;
//  - 200 sessions: 200 detached runs of an agent that exits at once, until every one is settled
//    (`session collect --all` until none is RUNNING), against 200 bare `sbatch` jobs until none is left.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { machineFacts, median, printResults, recordComparison, section } from './lib.mjs'
import { benchEnv, gitRepo, HARNESS } from './stores.mjs'

const CLUSTER = join(import.meta.dirname, '..', 'scripts', 'slurm-test-cluster.sh')
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 9
const many = Number(process.argv[process.argv.indexOf('--sessions') + 1]) || 200

// The nodes see neither the temp folder nor the home folder (a job loads the user's login environment there,
// which here ran `pyenv rehash` under a lock: a minute per job with eight at once; test/helpers/slurm.ts).
const hide = [tmpdir(), homedir()].flatMap((folder) => ['--hide', folder])
const dir = execFileSync(CLUSTER, ['start', '--owner', String(process.pid), ...hide], {
  encoding: 'utf8',
}).trim()
const facts = new Map(
  readFileSync(join(dir, 'cluster.env'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
)
const work = mkdtempSync(join(tmpdir(), 'harness-bench-slurm-'))
const home = join(work, 'home')
const env = {
  ...benchEnv(),
  HOME: home,
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_STATE_HOME: join(home, '.state'),
  SLURM_CONF: facts.get('SLURM_CONF'),
  HARNESS_AUTO_CLEANUP: 'off',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
}
const spool = facts.get('SPOOL')
const bin = facts.get('BIN')
mkdirSync(join(home, '.config', 'harness'), { recursive: true })
writeFileSync(
  join(home, '.config', 'harness', 'config.json'),
  JSON.stringify({ backend: 'slurm', slurm: { spool, scratch: facts.get('SCRATCH') } }),
)
const repo = gitRepo(join(work, 'repo'), env)

/** An agent on the nodes' PATH that writes `$1` (a file the submit host sees) and exits. */
const agent = join(bin, 'bench-agent')
writeFileSync(agent, '#!/bin/sh\n[ -n "$1" ] && : > "$1"\nexit 0\n')
chmodSync(agent, 0o755)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
/** Waits for `check`, looked at every `pollMs` (a file: 5 ms; the queue: 100 ms, not to load the controller). */
async function until(what, check, ceilingMs = 120_000, pollMs = 5) {
  const deadline = performance.now() + ceilingMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ceilingMs / 1000} s`)
    await sleep(pollMs)
  }
}
const queueEmpty = () =>
  execFileSync('squeue', ['--me', '-h', '-t', 'PENDING,RUNNING,COMPLETING', '-o', '%i'], {
    env,
    encoding: 'utf8',
  }).trim() === ''

try {
  console.log('Machine')
  for (const [key, value] of Object.entries(machineFacts())) console.log(`  ${key.padEnd(13)} ${value}`)

  await section('slurm', async () => {
    const harness = []
    const bare = []
    for (let i = 0; i < runs; i++) {
      // Alternated, so that load drifts into both alike.
      const mark = join(spool, `mark-h-${i}`)
      let started = performance.now()
      const run = spawnSync(HARNESS, ['run', '--detach', '-a', 'exec', '--', agent, mark], { cwd: repo, env })
      if (run.status !== 0)
        throw new Error(`harness run: ${run.status ?? run.signal}: ${run.stdout}${run.stderr}`)
      await until('the agent of harness run', () => existsSync(mark))
      harness.push(performance.now() - started)
      const markBare = join(spool, `mark-b-${i}`)
      const script = join(spool, `bare-${i}.sh`)
      writeFileSync(script, `#!/bin/sh\nexec ${agent} ${markBare}\n`)
      started = performance.now()
      execFileSync(
        'sbatch',
        ['--parsable', '--no-requeue', `--chdir=${spool}`, `--output=/dev/null`, script],
        {
          env,
        },
      )
      await until('the agent of bare sbatch', () => existsSync(markBare))
      bare.push(performance.now() - started)
    }
    recordComparison({
      label: 'slurm: run --detach to the agent running on a node',
      ms: median(harness),
      min: Math.min(...harness),
      max: Math.max(...harness),
      runs,
      floorLabel: 'bare sbatch',
      floorMs: median(bare),
    })
    await until('the queue to empty', queueEmpty, 120_000, 100)

    let started = performance.now()
    for (let i = 0; i < many; i++) {
      const run = spawnSync(HARNESS, ['run', '--detach', '-a', 'exec', '--', agent], { cwd: repo, env })
      if (run.status !== 0)
        throw new Error(`harness run: ${run.status ?? run.signal}: ${run.stdout}${run.stderr}`)
    }
    const submitted = performance.now() - started
    await until('every job to end', queueEmpty, 600_000, 100)
    execFileSync(HARNESS, ['session', 'collect', '--all'], { cwd: repo, env, stdio: 'ignore' })
    const running = JSON.parse(
      execFileSync(HARNESS, ['session', 'list', '--json'], { cwd: repo, env }),
    ).filter((record) => record.status === 'RUNNING')
    if (running.length) throw new Error(`${running.length} sessions still RUNNING after collect --all`)
    const settled = performance.now() - started
    started = performance.now()
    const script = join(spool, 'bare-many.sh')
    writeFileSync(script, `#!/bin/sh\nexec ${agent}\n`)
    for (let i = 0; i < many; i++) {
      execFileSync(
        'sbatch',
        ['--parsable', '--no-requeue', `--chdir=${spool}`, '--output=/dev/null', script],
        {
          env,
        },
      )
    }
    await until('every bare job to end', queueEmpty, 600_000, 100)
    const bareMany = performance.now() - started
    recordComparison({
      label: `slurm: ${many} sessions submitted (run --detach each)`,
      ms: submitted,
      floorLabel: `${many} bare sbatch, all done`,
      floorMs: bareMany,
    })
    recordComparison({
      label: `slurm: ${many} sessions run and settled (collect --all)`,
      ms: settled,
      floorLabel: `${many} bare sbatch, all done`,
      floorMs: bareMany,
    })
  })
  printResults()
} finally {
  spawnSync('scancel', ['--me'], { env })
  execFileSync(CLUSTER, ['stop', dir])
  rmSync(work, { recursive: true, force: true })
}
