import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { userInfo } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { slurmEngine } from '../../src/sessions/backends/slurm/engine.js'
import type { SlurmJobIdentity, SlurmJobView } from '../../src/sessions/backends/slurm/jobs.js'
import { type SlurmExec, slurmExec } from '../../src/sessions/backends/slurm/tools.js'
import { runsWith } from '../helpers/require.js'
import { CLUSTER_SCRIPT, type SlurmCluster, slurmMissing, useSlurmCluster } from '../helpers/slurm.js'
import { readAgentTar, readOutBundle, writeAgent, writeRunInputs } from '../helpers/slurm-run.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

/**
 * The Slurm engine against a real cluster: a controller and two compute nodes, each a daemon in its own network
 * namespace with its own hostname (scripts/slurm-test-cluster.sh). The nodes do not see the temp folder where
 * the tests make repositories: a job that reads the user's paths fails.
 */
const runs = runsWith('slurm', 'Slurm cluster tests', slurmMissing())

type Engine = ReturnType<typeof slurmEngine>

/** A prompt that would run commands if any shell read it: in the spool, where the nodes could write. */
const PROMPT = (spool: string) =>
  `it's "done" $(touch ${spool}/pwned1) \`touch ${spool}/pwned2\` \${HOME}; touch ${spool}/pwned3\nline two\n\t'x'"y"\\`

describe.skipIf(!runs)('the Slurm engine on a real cluster', () => {
  const cluster = useSlurmCluster()

  /** The engine as the backend will make it: spool and scratch of the cluster, `config` beside them. */
  function engine(
    config: Record<string, unknown> = {},
    env: NodeJS.ProcessEnv = {},
    exec?: SlurmExec,
  ): Engine {
    const c = cluster()
    const environment = { ...c.env, ...env }
    return slurmEngine(
      { spool: c.spool, scratch: c.scratch, ...config },
      environment,
      exec ?? slurmExec(environment),
    )
  }

  interface Submitted {
    identity: SlurmJobIdentity
    runDir: string
    branch: string
    base: string
    id: string
  }

  /** A session's run of `agentBody` (a bash script on the nodes' PATH), submitted as the backend will. */
  async function submit(
    e: Engine,
    repo: TmpRepo,
    agentBody: string,
    options: {
      id?: string
      run?: number
      argv?: string[]
      env?: Record<string, string>
      timeoutMs?: number
      agentFiles?: Record<string, string>
      agentTarFrom?: string
      sendBackSeconds?: number
    } = {},
  ): Promise<Submitted> {
    const c = cluster()
    const id = options.id ?? `s${Math.random().toString(36).slice(2, 10)}`
    const name = `agent-${id}`
    writeAgent(c.bin, name, agentBody)
    const spool = e.openSpool(repo.dir)
    const runDir = e.makeRunDir(spool, id, options.run ?? 1)
    const { branch, base } = writeRunInputs(repo, id, runDir, { agentFiles: options.agentFiles })
    if (options.agentTarFrom) writeFileSync(join(runDir, 'agent-in.tar'), readFileSync(options.agentTarFrom))
    const argv = options.argv?.map((arg) => (arg === 'AGENT' ? name : arg)) ?? [name]
    const identity = await e.submit({
      runDir,
      session: id,
      run: options.run ?? 1,
      branch,
      workRel: '',
      argv,
      env: options.env ?? {},
      timeoutMs: options.timeoutMs ?? null,
      worktreeState: false,
      agentFiles: options.agentFiles !== undefined || options.agentTarFrom !== undefined,
      path: `${c.bin}:/usr/bin:/bin`,
      sendBackSeconds: options.sendBackSeconds,
    })
    return { identity, runDir, branch, base, id }
  }

  const active = (view: SlurmJobView) => view.kind === 'queued' || view.kind === 'running'

  async function ended(e: Engine, identity: SlurmJobIdentity, timeoutMs = 120_000): Promise<SlurmJobView> {
    let last: SlurmJobView = { kind: 'forgotten' }
    await waitFor(
      `job ${identity.job_id} to end`,
      async () => {
        last = await e.view(identity)
        return !active(last)
      },
      timeoutMs,
    )
    return last
  }

  /** Every process left on the nodes, their slurmd apart (what a job could leave behind). */
  const leftOnNodes = (c: SlurmCluster) => c.nodes.flatMap((node) => c.jobProcesses(node.name))

  test('a run on a node: exit code, the node, commits and uncommitted files back; the user paths unseen', async () => {
    const c = cluster()
    const e = engine()
    const repo = tmpGitRepo()
    const job = await submit(
      e,
      repo,
      [
        'set -e',
        `printf '%s\\0' "$@" > "$HOME/argv"`,
        'hostname > "$HOME/host"',
        'pwd > "$HOME/pwd"',
        'if ls "$USER_REPO" >/dev/null 2>&1; then echo seen; else echo unseen; fi > "$HOME/user-repo"',
        'echo made > made.txt && git add made.txt && git -c user.name=A -c user.email=a@x commit -qm "made on a node"',
        'echo loose > loose.txt',
        'echo "output on $(hostname)"',
      ].join('\n'),
      { env: { USER_REPO: repo.dir }, argv: ['AGENT', '-p', PROMPT(c.spool)] },
    )
    expect(job.identity).toMatchObject({ cluster: c.name, submit_time: expect.stringMatching(/^\d{4}-/) })
    expect(Number(job.identity.job_id)).toBeGreaterThanOrEqual(c.firstJobId)
    const view = await ended(e, job.identity)
    expect(view).toEqual({ kind: 'exited', state: 'COMPLETED', exitCode: 0 })
    const report = e.report(job.runDir)
    expect(report).toMatchObject({ exitCode: 0, endedBy: 'exit', setupError: null })
    expect(c.nodes.map((node) => node.name)).toContain(report.node)
    const home = readAgentTar(job.runDir)
    expect(home.get('home/host')?.trim()).toBe(report.node)
    expect(home.get('home/user-repo')).toBe('unseen\n')
    // The prompt reached the agent byte for byte, and nothing in it ran (on the node, or here).
    expect(home.get('home/argv')).toBe(`-p\0${PROMPT(c.spool)}\0`)
    expect(readdirSync(c.spool).filter((name) => name.startsWith('pwned'))).toEqual([])
    expect(home.get('home/pwd')?.trim()).toBe(join(c.scratch, 'harness-0', job.id, 'work'))
    expect(readFileSync(join(job.runDir, 'log'), 'utf8')).toBe(`output on ${report.node}\n`)
    const out = readOutBundle(job.runDir, repo)
    expect(repo.git('log', '-1', '--format=%s', out?.refs.get(`refs/heads/${job.branch}`) ?? '')).toBe(
      'made on a node',
    )
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:loose.txt')).toBe('loose')
    // The node's scratch is its own (the submit host's folder stays empty) and the job removed its folder.
    expect(readdirSync(c.scratch)).toEqual([])
    expect(c.onNode(report.node ?? '', ['ls', '-A', join(c.scratch, 'harness-0')])).toBe('')
    // Spool files are the user's alone.
    const open = readdirSync(job.runDir).filter((file) => statSync(join(job.runDir, file)).mode & 0o077)
    expect(open).toEqual([])
    expect(statSync(join(job.runDir, '..', '..')).mode & 0o777).toBe(0o700)
  })

  test('an agent that exits 7: FAILED in Slurm, 7 in the exit code file', async () => {
    const e = engine()
    const job = await submit(e, tmpGitRepo(), 'exit 7')
    expect(await ended(e, job.identity)).toEqual({ kind: 'exited', state: 'FAILED', exitCode: 7 })
    expect(e.report(job.runDir)).toMatchObject({ exitCode: 7, endedBy: 'exit', sent: { commits: 'none' } })
  })

  test('partition, account, time and options from config are what Slurm holds; no requeue, the signal set', async () => {
    const e = engine({
      partition: 'second',
      account: 'proj-7',
      time: '5',
      options: ['--comment=from-config'],
    })
    const job = await submit(e, tmpGitRepo(), 'exit 0')
    const shown = execFileSync('scontrol', ['-o', 'show', 'job', job.identity.job_id], {
      env: cluster().env,
      encoding: 'utf8',
    })
    expect(shown).toContain(' Partition=second ')
    expect(shown).toContain(' Account=proj-7 ')
    expect(shown).toContain(' TimeLimit=00:05:00 ')
    expect(shown).toContain(' Comment=from-config ')
    expect(shown).toContain(' Requeue=0 ')
    expect(shown).toContain(` JobName=harness-${job.id} `)
    expect(shown).toContain(` StdOut=${join(job.runDir, 'log')} `)
    // A run's --timeout is the time limit instead.
    const timed = await submit(e, tmpGitRepo(), 'exit 0', { timeoutMs: 90_000 })
    const limit = execFileSync('scontrol', ['-o', 'show', 'job', timed.identity.job_id], {
      env: cluster().env,
      encoding: 'utf8',
    })
    expect(limit).toContain(' TimeLimit=00:02:00 ')
    await ended(e, job.identity)
    await ended(e, timed.identity)
  })

  test("the job loads the user's login environment on the node itself; what the job was given wins", async () => {
    // The nodes hide the user's home (an empty read-only tmpfs there): a login profile is put into it on each.
    const home = userInfo().homedir
    const profile = [
      'export HARNESS_LOGIN_MARK=from-the-profile',
      'export HARNESS_TEST_SECRET=overridden-by-the-profile',
      'echo noise on stdout',
    ].join('\n')
    const onNodes = (script: string) => {
      for (const node of cluster().nodes) {
        const result = spawnSync(
          CLUSTER_SCRIPT,
          ['exec', cluster().dir, node.key, '--', 'sh', '-c', script, 'sh', home, profile],
          { encoding: 'utf8' },
        )
        expect(result.status, result.stderr).toBe(0)
      }
    }
    const tmpfs =
      '[ "$(findmnt -n -o FSTYPE --mountpoint "$1")" = tmpfs ] || { echo "$1 is not hidden" >&2; exit 1; }'
    onNodes(
      `${tmpfs}; mount -o remount,rw "$1" && printf '%s\n' "$2" >"$1/.profile" && mount -o remount,ro "$1"`,
    )
    try {
      const e = engine({ env: ['HARNESS_TEST_SECRET'] }, { HARNESS_TEST_SECRET: 'given', NOT_NAMED: 'x' })
      const job = await submit(
        e,
        tmpGitRepo(),
        `printf "%s\\n" "$HARNESS_LOGIN_MARK" "$HARNESS_TEST_SECRET" "$\{NOT_NAMED:-unset}" "$USER" > "$HOME/env"`,
      )
      await ended(e, job.identity)
      const lines = readAgentTar(job.runDir).get('home/env')?.split('\n')
      expect(lines).toEqual(['from-the-profile', 'given', 'unset', userInfo().username, ''])
    } finally {
      onNodes(`${tmpfs}; mount -o remount,rw "$1" && rm -f "$1/.profile" && mount -o remount,ro "$1"`)
    }
  })

  test('a secret passed by name reaches the agent, and its value is in no spool file', async () => {
    const secret = `s3cret-${Math.random().toString(36).slice(2)}`
    const e = engine({ env: ['HARNESS_TEST_SECRET'] }, { HARNESS_TEST_SECRET: secret, NOT_NAMED: 'x' })
    const job = await submit(
      e,
      tmpGitRepo(),
      [
        'printenv HARNESS_TEST_SECRET | sha256sum | cut -c1-64 > "$HOME/secret-hash"',
        `echo "not named: $\{NOT_NAMED:-unset}" > "$HOME/other"`,
        // Submitted without SLURM_GET_USER_ENV (NONE or a list of names set it): slurmd's load costs a second.
        `echo "$\{SLURM_GET_USER_ENV:-unset}" > "$HOME/get-user-env"`,
      ].join('\n'),
    )
    await ended(e, job.identity)
    const home = readAgentTar(job.runDir)
    const hash = execFileSync('sha256sum', { input: `${secret}\n`, encoding: 'utf8' }).slice(0, 64)
    expect(home.get('home/secret-hash')?.trim()).toBe(hash)
    expect(home.get('home/other')).toBe('not named: unset\n')
    expect(home.get('home/get-user-env')).toBe('unset\n')
    const grep = spawnSync('grep', ['-r', '-a', '-l', '-F', secret, cluster().spool], { encoding: 'utf8' })
    expect(grep.stdout).toBe('')
    expect(grep.status).toBe(1)
  })

  test('a queued job shows as queued with Slurm reason, and a stop cancels it', async () => {
    const e = engine({ options: ['--begin=now+1hour'] })
    const job = await submit(e, tmpGitRepo(), 'exit 0')
    expect(await e.view(job.identity)).toEqual({ kind: 'queued', reason: 'BeginTime' })
    const outcome = await e.stop(job.identity, { graceMs: 5000 })
    expect(outcome).toEqual({ kind: 'stopped', view: { kind: 'cancelled' }, forced: false })
    expect(e.report(job.runDir).started).toBe(null)
  })

  test('a stop: TERM reaches the agent through the job script, the work comes back, the end is a stop', async () => {
    const e = engine()
    const repo = tmpGitRepo()
    const job = await submit(
      e,
      repo,
      [
        "trap 'echo stopped > stopped.txt; exit 143' TERM",
        'echo "working on it"',
        'while :; do sleep 0.1; done',
      ].join('\n'),
    )
    // The log is the job's --output, in the spool while it runs (what `logs -f` follows).
    await waitFor('the output while the agent runs', () =>
      readFileSync(join(job.runDir, 'log'), 'utf8').includes('working on it'),
    )
    expect(await e.view(job.identity)).toEqual({ kind: 'running', state: 'RUNNING' })
    const outcome = await e.stop(job.identity, { graceMs: 60_000 })
    expect(outcome).toEqual({
      kind: 'stopped',
      view: { kind: 'exited', state: 'FAILED', exitCode: 143 },
      forced: false,
    })
    expect(e.report(job.runDir)).toMatchObject({ exitCode: 143, endedBy: 'stop', sent: { agentFiles: true } })
    readOutBundle(job.runDir, repo)
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:stopped.txt')).toBe('stopped')
  })

  test('kill of an agent that ignores TERM, with children and a setsid grandchild: no job, no process on any node', async () => {
    const c = cluster()
    const e = engine()
    const job = await submit(
      e,
      tmpGitRepo(),
      [
        "trap '' TERM",
        '(trap "" TERM; exec sleep 600) &',
        'setsid bash -c \'trap "" TERM; (sleep 600 &); exec sleep 600\' &',
        'while :; do sleep 0.1; done',
      ].join('\n'),
    )
    await waitFor('the agent to start', () => e.report(job.runDir).started)
    const node = await waitFor('the agent processes', () => {
      const where = e.report(job.runDir).node
      return where && c.jobProcesses(where).length >= 5 ? where : undefined
    })
    const outcome = await e.stop(job.identity, { graceMs: 1500 })
    expect(outcome).toMatchObject({ kind: 'stopped', forced: true })
    expect(active(outcome.kind === 'stopped' ? outcome.view : { kind: 'forgotten' })).toBe(false)
    // Slurm kills what is left of the job through its cgroup, setsid or not.
    await waitFor('no process of the job on any node', () => leftOnNodes(c).length === 0)
    expect(c.jobProcesses(node)).toEqual([])
    expect(await e.view(job.identity)).toMatchObject({ kind: expect.stringMatching(/^(cancelled|exited)$/) })
  })

  test('a forged identity is never acted on: another submit time, another cluster, another user job', async () => {
    const c = cluster()
    const e = engine()
    const job = await submit(e, tmpGitRepo(), 'exec sleep 600')
    await waitFor('the agent to start', () => e.report(job.runDir).started)
    for (const forged of [
      { ...job.identity, submit_time: '2020-01-01T00:00:00' },
      { ...job.identity, cluster: 'another' },
    ]) {
      expect(await e.view(forged)).toEqual({ kind: 'foreign' })
      expect(await e.stop(forged, { graceMs: 0 })).toEqual({ kind: 'unverified' })
    }
    expect(await e.view(job.identity)).toEqual({ kind: 'running', state: 'RUNNING' })
    // Another user's job (nobody's), named with its real id, submit time and cluster.
    const theirs = join(c.spool, `other-${job.id}`)
    mkdirSync(theirs)
    execFileSync('chmod', ['1777', theirs])
    const id = execFileSync(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'sbatch', '--parsable', '--export=NONE'].concat(
        [`--output=${theirs}/out`, `--chdir=${theirs}`, '--wrap=exec sleep 600'],
      ),
      { env: c.env, encoding: 'utf8', cwd: theirs },
    ).trim()
    const row = execFileSync('squeue', ['-h', '-j', id, '-O', 'Cluster:|,SubmitTime:|'], {
      env: { ...c.env, TZ: 'UTC' },
      encoding: 'utf8',
    })
    const [theirCluster = '', theirSubmit = ''] = row.split('|')
    const foreign = { cluster: theirCluster, job_id: id, submit_time: theirSubmit }
    expect((await e.stop(foreign, { graceMs: 0 })).kind).toBe('gone')
    const state = () =>
      execFileSync('squeue', ['-h', '-t', 'all', '-j', id, '-o', '%T'], {
        env: c.env,
        encoding: 'utf8',
      }).trim()
    await waitFor('their job to run', () => state() === 'RUNNING')
    expect(await e.stop(foreign, { graceMs: 0 })).toEqual({ kind: 'gone', view: { kind: 'forgotten' } })
    expect(state()).toBe('RUNNING')
    execFileSync('scancel', [id], { env: c.env })
    await e.stop(job.identity, { graceMs: 0 })
  })

  test('a node that fails under a running job: NODE_FAIL, interrupted (PAUSED, resumable)', async () => {
    const c = cluster()
    const e = engine()
    const job = await submit(e, tmpGitRepo(), 'exec sleep 600')
    const node = await waitFor(
      'the agent to start',
      () => e.report(job.runDir).started && e.report(job.runDir).node,
    )
    const scontrol = (...args: string[]) => execFileSync('scontrol', args, { env: c.env, encoding: 'utf8' })
    scontrol('update', `NodeName=${node}`, 'State=DOWN', 'Reason=harness-test')
    expect(await ended(e, job.identity)).toEqual({ kind: 'interrupted', state: 'NODE_FAIL' })
    await waitFor('no process of the job on the node', () => c.jobProcesses(node ?? '').length === 0)
    // Back in service for the tests after this one: by itself (ReturnToService=2: its slurmd still answers).
    await waitFor('the node to be idle', () =>
      scontrol('-o', 'show', 'node', node ?? '').includes('State=IDLE'),
    )
  })

  test('liveness of many sessions is one squeue', async () => {
    const calls: string[] = []
    const real = slurmExec(cluster().env)
    const counting: SlurmExec = (tool, args, options) => {
      calls.push(tool)
      return real(tool, args, options)
    }
    const e = engine({ options: ['--begin=now+1hour'] }, {}, counting)
    const repo = tmpGitRepo()
    const jobs: Submitted[] = []
    for (let i = 0; i < 12; i++) jobs.push(await submit(e, repo, 'exit 0'))
    calls.length = 0
    const views = await e.views([
      ...jobs.map((job) => job.identity),
      { cluster: cluster().name, job_id: '99999999', submit_time: '2026-01-01T00:00:00' },
    ])
    expect(calls).toEqual(['squeue'])
    expect(views.slice(0, 12).every((view) => view.kind === 'queued')).toBe(true)
    expect(views[12]).toEqual({ kind: 'forgotten' })
    for (const job of jobs) await e.stop(job.identity, { graceMs: 0 })
  })

  test('the agent files resume on the other node: same HOME contents, same working path', async () => {
    const c = cluster()
    const [first, second] = c.nodes
    const repo = tmpGitRepo()
    const id = `r${Math.random().toString(36).slice(2, 8)}`
    const body = 'echo "turn on $(hostname) in $PWD" >> "$HOME/conversation"'
    const e1 = engine({ options: [`--nodelist=${first?.name}`] })
    const one = await submit(e1, repo, body, { id, run: 1, agentFiles: { 'home/conversation': 'started\n' } })
    await ended(e1, one.identity)
    const e2 = engine({ options: [`--nodelist=${second?.name}`] })
    const two = await submit(e2, repo, body, { id, run: 2, agentTarFrom: join(one.runDir, 'agent-out.tar') })
    await ended(e2, two.identity)
    const work = join(c.scratch, 'harness-0', id, 'work')
    expect(readAgentTar(two.runDir).get('home/conversation')).toBe(
      `started\nturn on ${first?.name} in ${work}\nturn on ${second?.name} in ${work}\n`,
    )
  })

  test('no sbatch, or a controller that does not answer: exit 5 naming the command', async () => {
    const repo = tmpGitRepo()
    const noSlurm = engine({}, { PATH: tmpDir() })
    await expect(submit(noSlurm, repo, 'exit 0')).rejects.toMatchObject({
      exitCode: 5,
      code: 'SLURM_MISSING',
    })
    const conf = join(tmpDir(), 'slurm.conf')
    writeFileSync(
      conf,
      readFileSync(cluster().env.SLURM_CONF ?? '', 'utf8').replace(/^SlurmctldPort=\d+$/m, 'SlurmctldPort=1'),
    )
    const down = engine({}, { SLURM_CONF: conf })
    await expect(submit(down, repo, 'exit 0')).rejects.toMatchObject({
      exitCode: 5,
      code: 'SLURM_UNREACHABLE',
      message: expect.stringContaining('sbatch cannot reach the Slurm controller'),
    })
  })

  test('doctor: sbatch, the cluster, a test-only submission, and a real job that checks a node', async () => {
    const c = cluster()
    const e = engine({ partition: 'main', time: '5' })
    const checks = await e.checks()
    expect(checks).toEqual([
      {
        name: 'slurm',
        status: 'ok',
        detail: expect.stringMatching(new RegExp(`^slurm(-wlm)? \\d+\\.\\d+\\.\\d+, cluster ${c.name}$`)),
      },
      {
        name: 'slurm test-only',
        status: 'ok',
        detail: expect.stringMatching(/^Job \d+ to start at .* on nodes .* in partition main$/),
      },
    ])
    writeAgent(c.bin, 'doctor-agent', 'exit 0')
    const spool = e.openSpool(null)
    const ok = await e.submitTest({
      spool,
      agentCommand: 'doctor-agent',
      path: `${c.bin}:/usr/bin:/bin`,
      timeoutMs: 120_000,
    })
    expect(ok).toMatchObject({ name: 'slurm submit-test', status: 'ok' })
    expect(ok.detail).toMatch(
      new RegExp(
        `ran on ${c.name}-n[12]: spool seen, scratch ${c.scratch} writable, git, bash, tar, setsid, timeout, doctor-agent found`,
      ),
    )
    const missing = await e.submitTest({
      spool,
      agentCommand: 'no-such-agent',
      path: `${c.bin}:/usr/bin:/bin`,
      timeoutMs: 120_000,
    })
    expect(missing).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('not found: no-such-agent'),
    })
    // A spool the nodes do not see (the temp folder is hidden from them): the job cannot report.
    const hidden = slurmEngine({ spool: tmpDir() }, c.env)
    const unseen = await hidden.submitTest({
      spool: hidden.openSpool(null),
      agentCommand: 'bash',
      path: null,
      timeoutMs: 120_000,
    })
    expect(unseen).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('do the nodes see slurm.spool?'),
    })
    expect(readdirSync(spool.userDir).filter((name) => name.startsWith('doctor-'))).toEqual([])
  })

  test("past Slurm's time limit: TERM first, the work sent back, the end a timeout", async () => {
    const e = engine()
    const repo = tmpGitRepo()
    // The agent ignores the TERM sent before the limit: Slurm's TIMEOUT ends the job, the work still comes back.
    const job = await submit(
      e,
      repo,
      ["trap 'echo late > late.txt' TERM", 'echo early > early.txt', 'while :; do sleep 0.2; done'].join(
        '\n',
      ),
      { timeoutMs: 60_000, sendBackSeconds: 30 },
    )
    const view = await ended(e, job.identity, 300_000)
    expect(view).toEqual({ kind: 'timeout', state: 'TIMEOUT' })
    expect(e.report(job.runDir)).toMatchObject({
      endedBy: 'timeout',
      exitCode: 137,
      sent: { agentFiles: true },
    })
    readOutBundle(job.runDir, repo)
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:early.txt')).toBe('early')
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:late.txt')).toBe('late')
  }, 400_000)
})
