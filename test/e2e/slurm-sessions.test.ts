import { execFileSync, spawn } from 'node:child_process'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { runsWith } from '../helpers/require.js'
import { type BackendRecord, readRecord, recordIfAny, writeRecord } from '../helpers/sessions.js'
import { slurmMissing, useSlurmCluster } from '../helpers/slurm.js'
import { writeAgent } from '../helpers/slurm-run.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

/**
 * Sessions on a Slurm cluster through the command line (SPEC §14 `slurm`, docs/backends.md): `harness run
 * --backend slurm` on the test cluster (scripts/slurm-test-cluster.sh: a controller and two compute nodes, each
 * in its own namespaces with its own hostname; the nodes do not see the temp folder where the repositories are).
 * The agents are scripts in the cluster's `bin` folder, which every node sees, run by the `exec` agent.
 */
const runs = runsWith('slurm', 'Slurm session tests', slurmMissing())

interface SlurmRecord extends BackendRecord {
  backend?: string
  slurm?: {
    cluster: string
    job_id: string
    submit_time: string
    run: number
    spool: string
    node?: string
    collected?: { kind: string; commits?: number }
  }
}

const TIMEOUT = 300_000

describe.skipIf(!runs)('sessions on a Slurm cluster', () => {
  const cluster = useSlurmCluster()

  /** A repository whose user config sends sessions to the cluster; its environment names the cluster. */
  function slurmRepo(slurm: Record<string, unknown> = {}): TmpRepo {
    const c = cluster()
    const repo = tmpGitRepo()
    const configDir = join(repo.home, '.config', 'harness')
    mkdirSync(configDir, { recursive: true })
    writeFileSync(
      join(configDir, 'config.json'),
      JSON.stringify({ backend: 'slurm', slurm: { spool: c.spool, scratch: c.scratch, ...slurm } }),
    )
    repo.env = { ...repo.env, SLURM_CONF: c.env.SLURM_CONF }
    return repo
  }

  /** An agent script every node sees; its absolute path (the `exec` agent runs it). */
  function agent(body: string): string {
    const name = `agent-${Math.random().toString(36).slice(2, 10)}`
    return writeAgent(cluster().bin, name, body)
  }

  const run = (repo: TmpRepo, args: string[], options: { process?: boolean } = {}) =>
    cli(['run', ...args], { cwd: repo.dir, env: repo.env, timeoutMs: TIMEOUT, ...options })

  function squeueAll(): string {
    return execFileSync('squeue', ['--me', '-h', '-t', 'all', '-o', '%i %T'], {
      env: cluster().env,
      encoding: 'utf8',
    })
  }
  const jobState = (jobId: string) =>
    squeueAll()
      .split('\n')
      .find((line) => line.startsWith(`${jobId} `))
      ?.split(' ')[1]
  const leftOnNodes = () => cluster().nodes.flatMap((node) => cluster().jobProcesses(node.name))
  const nodeNames = () => cluster().nodes.map((node) => node.name)

  test(
    'an agent that commits, one that leaves files, one that exits 7: statuses, codes, work back, on a node',
    async () => {
      const repo = slurmRepo()
      const commits = agent(
        [
          'set -e',
          'echo "ran on $(hostname) in $(pwd)"',
          'echo made > made.txt && git add made.txt && git -c user.name=A -c user.email=a@x commit -qm "made on a node"',
          'echo loose > loose.txt',
        ].join('\n'),
      )
      const first = await run(repo, ['--json', '-a', 'exec', '--', commits])
      expect(first.exitCode, first.stderr).toBe(0)
      const done = json<SlurmRecord>(first)
      expect(done).toMatchObject({ status: 'COMPLETED', exit_code: 0, backend: 'slurm' })
      expect(nodeNames()).toContain(done.slurm?.node)
      expect(done.slurm?.collected).toMatchObject({ kind: 'fast-forward', commits: 1 })
      // What it changed, as for a local run: the committed file and the uncommitted one.
      expect((done as SlurmRecord & { files_modified?: string[] }).files_modified?.sort()).toEqual([
        'loose.txt',
        'made.txt',
      ])
      expect(repo.git('log', '-1', '--format=%s', done.git_branch)).toBe('made on a node')
      expect(readFileSync(join(done.worktree_dir, 'loose.txt'), 'utf8')).toBe('loose\n')
      expect(repo.git('-C', done.worktree_dir, 'status', '--porcelain')).toBe('?? loose.txt')
      // It ran in node-local scratch, never in the user's checkout, which is as it was.
      const log = await cli(['session', 'logs', done.id], { cwd: repo.dir, env: repo.env })
      expect(log.stdout).toContain(`ran on ${done.slurm?.node} in ${cluster().scratch}/`)
      expect(existsSync(join(repo.dir, 'made.txt')) || existsSync(join(repo.dir, 'loose.txt'))).toBe(false)
      expect(repo.git('status', '--porcelain')).toBe('')

      const leaves = agent('echo left > left.txt\nmkdir -p sub && echo deep > sub/deep.txt')
      const second = json<SlurmRecord>(await run(repo, ['--json', '-a', 'exec', '--', leaves]))
      expect(second).toMatchObject({ status: 'COMPLETED', exit_code: 0 })
      expect(second.slurm?.collected).toMatchObject({ kind: 'none' })
      expect(readFileSync(join(second.worktree_dir, 'sub', 'deep.txt'), 'utf8')).toBe('deep\n')
      expect(repo.git('rev-parse', second.git_branch)).toBe(repo.git('rev-parse', 'main'))

      const fails = await run(repo, [
        '--json',
        '-a',
        'exec',
        '--',
        agent('echo partial > partial.txt\nexit 7'),
      ])
      expect(fails.exitCode).toBe(7)
      const failed = json<SlurmRecord>(fails)
      expect(failed).toMatchObject({ status: 'FAILED', exit_code: 7 })
      expect(readFileSync(join(failed.worktree_dir, 'partial.txt'), 'utf8')).toBe('partial\n')
    },
    TIMEOUT,
  )

  test(
    '--detach returns once Slurm has the job; logs -f follows it; wait gives its code; collect settles it',
    async () => {
      const repo = slurmRepo()
      const marker = join(cluster().spool, `go-${Math.random().toString(36).slice(2)}`)
      const body = [
        'echo started',
        `while [ ! -e ${marker} ]; do sleep 0.2; done`,
        'echo work > work.txt',
        'git add work.txt && git -c user.name=A -c user.email=a@x commit -qm work',
        'echo finished',
        'exit 3',
      ].join('\n')
      const started = await run(repo, ['--detach', '--json', '-a', 'exec', '--', agent(body)], {
        process: true,
      })
      expect(started.exitCode, started.stderr).toBe(0)
      const record = json<SlurmRecord>(started)
      expect(record).toMatchObject({ status: 'RUNNING', backend: 'slurm' })
      expect(jobState(record.slurm?.job_id ?? '')).toMatch(/PENDING|CONFIGURING|RUNNING/)
      const follow = spawn(HARNESS_BIN, ['session', 'logs', '-f', record.id], {
        cwd: repo.dir,
        env: repo.env,
      })
      let followed = ''
      follow.stdout.on('data', (chunk: Buffer) => {
        followed += chunk.toString()
      })
      const followEnd = new Promise<number | null>((resolve) => follow.on('close', resolve))
      await waitFor('the job to start the agent', () => followed.includes('started'), 120_000)
      writeFileSync(marker, '')
      const waited = await cli(['session', 'wait', record.id], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(waited.exitCode).toBe(3)
      expect(await followEnd).toBe(0)
      expect(followed).toContain('finished')
      // wait read; it changed nothing: the work is still to collect.
      expect(readRecord<SlurmRecord>(repo.dir, record.id).slurm?.collected).toBeUndefined()
      // Nor do the other reading commands: the record, the refs and the worktree stay byte for byte as they were.
      const state = () => [
        readFileSync(join(repo.dir, '.harness', 'sessions', `${record.id}.json`), 'utf8'),
        repo.git('for-each-ref'),
        repo.git('-C', record.worktree_dir, 'status', '--porcelain'),
        readdirSync(join(record.slurm?.spool ?? '', record.id, 'run-1'))
          .sort()
          .join(' '),
      ]
      const before = state()
      for (const args of [
        ['list'],
        ['show', record.id],
        ['path', record.id],
        ['logs', record.id],
        ['wait', record.id],
      ]) {
        const read = await cli(['session', ...args], { cwd: repo.dir, env: repo.env, timeoutMs: TIMEOUT })
        expect(read.exitCode, `${args.join(' ')}: ${read.stderr}`).toBe(args[0] === 'wait' ? 3 : 0)
      }
      expect(state()).toEqual(before)
      const collected = await cli(['session', 'collect', record.id], { cwd: repo.dir, env: repo.env })
      expect(collected.exitCode, collected.stderr).toBe(0)
      const settled = readRecord<SlurmRecord>(repo.dir, record.id)
      expect(settled).toMatchObject({ status: 'FAILED', exit_code: 3 })
      expect(repo.git('log', '-1', '--format=%s', settled.git_branch)).toBe('work')
    },
    TIMEOUT,
  )

  test(
    'kill of an agent that ignores SIGTERM, with a setsid grandchild: no job, no process on any node',
    async () => {
      const repo = slurmRepo()
      const body = [
        "trap '' TERM",
        '(trap "" TERM; sleep 600) &',
        'setsid sleep 600 &',
        'echo ready',
        'while :; do sleep 0.2; done',
      ].join('\n')
      const record = json<SlurmRecord>(
        await run(repo, ['--detach', '--json', '-a', 'exec', '--', agent(body)]),
      )
      const jobId = record.slurm?.job_id ?? ''
      await waitFor(
        'the agent to run',
        () => jobState(jobId) === 'RUNNING' && leftOnNodes().length > 2,
        120_000,
      )
      const kill = await cli(['session', 'kill', '--grace', '2s', record.id], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(kill.exitCode, kill.stderr).toBe(0)
      expect(kill.stdout).toBe(`session ${record.id} killed\n`)
      expect(readRecord<SlurmRecord>(repo.dir, record.id).status).toBe('KILLED')
      await waitFor('the job to be gone', () => !/RUNNING|COMPLETING/.test(jobState(jobId) ?? ''), 120_000)
      await waitFor('no process left on the nodes', () => leftOnNodes().length === 0, 120_000)
      expect(leftOnNodes()).toEqual([])
    },
    TIMEOUT,
  )

  test(
    'a SIGKILLed harness run leaves the job to the cluster: wait gives the real code, resume runs on',
    async () => {
      const repo = slurmRepo()
      const marker = join(cluster().spool, `go-${Math.random().toString(36).slice(2)}`)
      const body = [
        'echo "run $(cat "$HOME/runs" 2>/dev/null | wc -l)"',
        'hostname >> "$HOME/runs"',
        'echo same > same.txt',
        `while [ ! -e ${marker} ]; do sleep 0.2; done`,
        'exit 5',
      ].join('\n')
      const client = spawn(HARNESS_BIN, ['run', '-a', 'exec', '--', agent(body)], {
        cwd: repo.dir,
        env: repo.env,
      })
      const clientEnd = new Promise<void>((resolve) => client.on('close', () => resolve()))
      const sessionsDir = join(repo.dir, '.harness', 'sessions')
      let id = ''
      await waitFor(
        'the job to be submitted',
        () => {
          const file = existsSync(sessionsDir)
            ? readdirSync(sessionsDir).find((n) => /^\w+\.json$/.test(n))
            : null
          id = file?.replace('.json', '') ?? ''
          return !!id && !!recordIfAny<SlurmRecord>(repo.dir, id)?.slurm
        },
        120_000,
      )
      client.kill('SIGKILL')
      await clientEnd
      writeFileSync(marker, '')
      const waited = await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env, timeoutMs: TIMEOUT })
      expect(waited.exitCode).toBe(5)
      const show = json<SlurmRecord>(
        await cli(['session', 'show', '--json', id], { cwd: repo.dir, env: repo.env }),
      )
      expect(show.exit_code ?? 5).toBe(5)
      // resume settles the first run, then runs again on the cluster with the agent files of the first.
      const resumed = await cli(['session', 'resume', id], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(resumed.exitCode).toBe(5)
      const record = readRecord<SlurmRecord & { runs: { exit_code: number }[] }>(repo.dir, id)
      expect(record.runs.map((r) => r.exit_code)).toEqual([5, 5])
      // The job's uncommitted files were in the worktree already: nothing of them is left under harness's refs.
      expect(readFileSync(join(record.worktree_dir, 'same.txt'), 'utf8')).toBe('same\n')
      expect(repo.git('for-each-ref', `refs/harness/${id}/`)).toBe('')
      expect(record.slurm?.run).toBe(2)
      const home = readFileSync(join(repo.dir, '.harness', 'agents', id, 'home', 'runs'), 'utf8')
        .trim()
        .split('\n')
      expect(home).toHaveLength(2)
      for (const node of home) expect(nodeNames()).toContain(node)
      const log = await cli(['session', 'logs', id], { cwd: repo.dir, env: repo.env })
      expect(log.stdout).toContain('run 0')
      expect(log.stdout).toContain('run 1')
    },
    TIMEOUT,
  )

  test(
    "a PENDING job is RUNNING (queued) with Slurm's reason in list and show; kill cancels it",
    async () => {
      const repo = slurmRepo({ options: ['--hold'] })
      const record = json<SlurmRecord>(
        await run(repo, ['--detach', '--json', '-a', 'exec', '--', agent('exit 0')]),
      )
      const list = await cli(['session', 'list'], { cwd: repo.dir, env: repo.env })
      expect(list.stdout).toContain('RUNNING (queued: JobHeldUser)')
      const show = json<{ status: string; queued?: string }>(
        await cli(['session', 'show', '--json', record.id], { cwd: repo.dir, env: repo.env }),
      )
      expect(show).toMatchObject({ status: 'RUNNING', queued: 'JobHeldUser' })
      const kill = await cli(['session', 'kill', record.id], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(kill.exitCode, kill.stderr).toBe(0)
      expect(readRecord<SlurmRecord>(repo.dir, record.id).status).toBe('KILLED')
      expect(jobState(record.slurm?.job_id ?? '')).toBe('CANCELLED')
    },
    TIMEOUT,
  )

  test(
    'a node that fails under the job: PAUSED (interrupted) and resumable on the cluster',
    async () => {
      const repo = slurmRepo()
      const c = cluster()
      const marker = join(c.spool, `first-${Math.random().toString(36).slice(2)}`)
      // The first run waits on a node; the resume finds the marker and ends at once.
      const body = `if [ -e ${marker} ]; then echo resumed; exit 0; fi\n: > ${marker}\nexec sleep 600`
      const record = json<SlurmRecord>(
        await run(repo, ['--detach', '--json', '-a', 'exec', '--', agent(body)]),
      )
      const jobId = record.slurm?.job_id ?? ''
      await waitFor('the agent to start', () => existsSync(marker), 120_000)
      const node = execFileSync('squeue', ['--me', '-h', '-j', jobId, '-o', '%N'], {
        env: c.env,
        encoding: 'utf8',
      }).trim()
      const scontrol = (...args: string[]) => execFileSync('scontrol', args, { env: c.env, encoding: 'utf8' })
      scontrol('update', `NodeName=${node}`, 'State=DOWN', 'Reason=harness-test')
      const waited = await cli(['session', 'wait', record.id], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(waited.exitCode, waited.stderr).toBe(4)
      await cli(['session', 'collect', record.id], { cwd: repo.dir, env: repo.env, timeoutMs: TIMEOUT })
      expect(readRecord<SlurmRecord>(repo.dir, record.id)).toMatchObject({
        status: 'PAUSED',
        stop_reason: 'interrupted',
      })
      await waitFor(
        'the node to be back',
        () => scontrol('-o', 'show', 'node', node).includes('State=IDLE'),
        120_000,
      )
      const resumed = await cli(['session', 'resume', record.id], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(resumed.exitCode, resumed.stderr).toBe(0)
      expect(readRecord<SlurmRecord>(repo.dir, record.id)).toMatchObject({
        status: 'COMPLETED',
        exit_code: 0,
      })
    },
    TIMEOUT,
  )

  test(
    'a history rewritten on the node, tags and branches made there: the branch is not moved, nothing else comes',
    async () => {
      const repo = slurmRepo()
      const body = [
        'set -e',
        'git -c user.name=E -c user.email=e@x commit -q --amend -m rewritten',
        'git tag evil-tag',
        'git branch evil-branch',
        'git update-ref refs/heads/main HEAD',
      ].join('\n')
      const before = repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')
      const done = json<SlurmRecord & { slurm: { collected: { kind: string; ref?: string } } }>(
        await run(repo, ['--json', '-a', 'exec', '--', agent(body)]),
      )
      expect(done.slurm.collected.kind).toBe('diverged')
      expect(repo.git('rev-parse', done.git_branch)).toBe(repo.git('rev-parse', 'main'))
      expect(repo.git('log', '-1', '--format=%s', done.slurm.collected.ref ?? '')).toBe('rewritten')
      const after = repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')
      expect(after.split('\n').filter((line) => !line.startsWith(`refs/heads/${done.git_branch}`))).toEqual(
        before.split('\n'),
      )
    },
    TIMEOUT,
  )

  test(
    'Ctrl-C of a foreground run stops the job as pause does: its work back, PAUSED interrupt, wait 130',
    async () => {
      const repo = slurmRepo()
      const body = [
        "trap 'echo stopped > stopped.txt; exit 143' TERM",
        'echo waiting',
        'while :; do sleep 0.2; done',
      ].join('\n')
      const client = spawn(HARNESS_BIN, ['run', '-a', 'exec', '--', agent(body)], {
        cwd: repo.dir,
        env: repo.env,
      })
      let out = ''
      client.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
      })
      const end = new Promise<NodeJS.Signals | number | null>((resolve) =>
        client.on('close', (code, signal) => resolve(signal ?? code)),
      )
      await waitFor('the agent to run on a node', () => out.includes('waiting'), 120_000)
      client.kill('SIGINT')
      // As a local foreground run: it dies of SIGINT (the shell's 130), the session PAUSED by the interrupt.
      expect(await end).toBe('SIGINT')
      const id = readdirSync(join(repo.dir, '.harness', 'sessions'))[0]?.replace('.json', '') ?? ''
      const record = readRecord<SlurmRecord>(repo.dir, id)
      expect(record).toMatchObject({ status: 'PAUSED', stop_reason: 'interrupt' })
      expect(readFileSync(join(record.worktree_dir, 'stopped.txt'), 'utf8')).toBe('stopped\n')
      expect((await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env })).exitCode).toBe(130)
      expect(/RUNNING|PENDING/.test(jobState(record.slurm?.job_id ?? '') ?? '')).toBe(false)
    },
    TIMEOUT,
  )

  test(
    'cleanup leaves no job, no spool file and no scratch folder',
    async () => {
      const repo = slurmRepo()
      const done = json<SlurmRecord>(await run(repo, ['--json', '-a', 'exec', '--', agent('echo x > x.txt')]))
      const spoolDir = join(done.slurm?.spool ?? '', done.id)
      expect(existsSync(spoolDir)).toBe(true)
      const cleanup = await cli(['session', 'cleanup', '--older-than', '0', '--force'], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      expect(cleanup.exitCode, cleanup.stderr).toBe(0)
      expect(recordIfAny(repo.dir, done.id)).toBeNull()
      expect(existsSync(spoolDir)).toBe(false)
      for (const node of nodeNames()) {
        const listed = cluster().onNode(node, ['find', cluster().scratch, '-path', `*${done.id}*`])
        expect(listed.trim()).toBe('')
      }
      expect(/RUNNING|PENDING/.test(jobState(done.slurm?.job_id ?? '') ?? '')).toBe(false)
    },
    TIMEOUT,
  )

  test(
    'a forged record naming a foreign job is never cancelled (unsealed, or another submit time)',
    async () => {
      const repo = slurmRepo()
      const c = cluster()
      const foreignJob = execFileSync(
        'sbatch',
        ['--parsable', '--no-requeue', `--chdir=${c.spool}`, '--wrap', 'sleep 600'],
        {
          env: c.env,
          encoding: 'utf8',
        },
      )
        .trim()
        .split(';')[0] as string
      await waitFor('the foreign job to run', () => jobState(foreignJob) === 'RUNNING', 120_000)
      const [clusterName = '', submitTime = ''] = execFileSync(
        'squeue',
        ['--me', '-h', '-j', foreignJob, '-O', 'Cluster:|,SubmitTime'],
        { env: c.env, encoding: 'utf8' },
      )
        .trim()
        .split('|')
        .map((s) => s.trim())
      const forged = (id: string, submit: string) => ({
        id,
        provider: 'exec',
        status: 'RUNNING',
        worktree_dir: repo.dir,
        is_worktree: false,
        created_at: new Date().toISOString(),
        backend: 'slurm',
        slurm: {
          cluster: clusterName,
          job_id: foreignJob,
          submit_time: submit,
          run: 1,
          spool: join(c.spool, 'harness-0'),
          start_tip: '0'.repeat(40),
          start_tree: '0'.repeat(40),
        },
        runs: [{ n: 1, kind: 'start', started_at: new Date().toISOString(), pid: null }],
      })
      writeRecord(repo.dir, repo.env, forged('forged01', submitTime), { seal: false })
      writeRecord(repo.dir, repo.env, forged('forged02', '2001-01-01T00:00:00'))
      for (const id of ['forged01', 'forged02']) {
        const kill = await cli(['session', 'kill', '--grace', '1s', id], {
          cwd: repo.dir,
          env: repo.env,
          timeoutMs: TIMEOUT,
        })
        const recover = await cli(['session', 'recover', id], {
          cwd: repo.dir,
          env: repo.env,
          timeoutMs: TIMEOUT,
        })
        expect(kill.exitCode).toBe(4)
        expect(kill.stderr).toMatch(id === 'forged01' ? /is foreign/ : /cannot be verified/)
        expect(recover.exitCode).toBe(0)
      }
      await cli(['session', 'cleanup', '--older-than', '0', '--force'], { cwd: repo.dir, env: repo.env })
      await cli(['session', 'collect', '--all'], { cwd: repo.dir, env: repo.env })
      await cli(['session', 'list'], { cwd: repo.dir, env: repo.env })
      expect(jobState(foreignJob)).toBe('RUNNING')
      execFileSync('scancel', [foreignJob], { env: c.env })
    },
    TIMEOUT,
  )

  test(
    'an agent that plants hooks, filters, a fsmonitor, FIFOs and links gets nothing run on the host',
    async () => {
      const repo = slurmRepo()
      const c = cluster()
      const trail = join(c.spool, `trail-${Math.random().toString(36).slice(2)}`)
      const note = `sh -c 'hostname >> ${trail}'`
      const body = [
        'set -e',
        `git config core.fsmonitor "${note}"`,
        `git config core.hooksPath hooks && mkdir -p hooks && printf '#!/bin/sh\\n${note.replace(/'/g, "'\\''")}\\n' > hooks/post-checkout && chmod +x hooks/post-checkout`,
        `git config filter.evil.clean "${note}; cat" && git config filter.evil.smudge "${note}; cat"`,
        "echo '*.txt filter=evil' > .gitattributes",
        'echo a > a.txt && git add -A && git -c user.name=A -c user.email=a@x commit -qm planted',
        'mkfifo pipe-in-worktree',
        `mkdir -p nested && git -C nested init -q && git -C nested config core.fsmonitor "${note}"`,
        'mkfifo "$HOME/pipe" && ln -s /etc/passwd "$HOME/link"',
        'echo kept > "$HOME/kept"',
      ].join('\n')
      const result = json<SlurmRecord>(await run(repo, ['--json', '-a', 'exec', '--', agent(body)]))
      expect(result.status).toBe('COMPLETED')
      // Anything the agent planted ran only on a node, never on this host.
      const ranOn = existsSync(trail) ? readFileSync(trail, 'utf8').trim().split('\n') : []
      expect(ranOn).not.toContain(hostname())
      for (const host of ranOn) expect(nodeNames()).toContain(host)
      await cli(['session', 'show', result.id], { cwd: repo.dir, env: repo.env })
      await cli(['session', 'diff', result.id], { cwd: repo.dir, env: repo.env })
      const after = existsSync(trail) ? readFileSync(trail, 'utf8').trim().split('\n') : []
      expect(after).not.toContain(hostname())
      // The user's repository config is untouched, and the agent folder came back with plain files only.
      expect(readFileSync(join(repo.dir, '.git', 'config'), 'utf8')).not.toMatch(/fsmonitor|evil|hooksPath/)
      const home = join(repo.dir, '.harness', 'agents', result.id, 'home')
      expect(readFileSync(join(home, 'kept'), 'utf8')).toBe('kept\n')
      expect(existsSync(join(home, 'pipe'))).toBe(false)
      expect(() => lstatSync(join(home, 'link'))).toThrow()
    },
    TIMEOUT,
  )

  test(
    'a secret passed by name reaches the agent; its value is in no spool file, record or log',
    async () => {
      const secret = `s3cr3t-${Math.random().toString(36).slice(2)}`
      const repo = slurmRepo({
        env: ['HARNESS_TEST_SECRET'],
        partition: 'second',
        account: 'proj-7',
        time: '5',
        options: ['--comment=from-config'],
      })
      repo.env = { ...repo.env, HARNESS_TEST_SECRET: secret }
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's length of a variable, for the node's shell
      const body = 'echo "secret of length ${#HARNESS_TEST_SECRET}"'
      const done = json<SlurmRecord>(await run(repo, ['--json', '-a', 'exec', '--', agent(body)]))
      expect(done.status).toBe('COMPLETED')
      // The session's job got the partition, account, time and options of config, and harness's own options.
      const shown = execFileSync('scontrol', ['-o', 'show', 'job', done.slurm?.job_id ?? ''], {
        env: cluster().env,
        encoding: 'utf8',
      })
      for (const field of [
        'Partition=second',
        'Account=proj-7',
        'TimeLimit=00:05:00',
        'Comment=from-config',
        'Requeue=0',
      ]) {
        expect(shown).toContain(` ${field} `)
      }
      const log = await cli(['session', 'logs', done.id], { cwd: repo.dir, env: repo.env })
      expect(log.stdout).toContain(`secret of length ${secret.length}`)
      const files: string[] = []
      const walk = (dir: string) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
          const path = join(dir, entry.name)
          if (entry.isDirectory()) walk(path)
          else if (entry.isFile()) files.push(path)
        }
      }
      walk(join(done.slurm?.spool ?? '', done.id))
      walk(join(repo.dir, '.harness'))
      expect(files.length).toBeGreaterThan(5)
      for (const file of files) expect(readFileSync(file).includes(secret), file).toBe(false)
      const spoolUser = done.slurm?.spool ?? ''
      expect(lstatSync(spoolUser).mode & 0o777).toBe(0o700)
      for (const file of files.filter((f) => f.startsWith(spoolUser)))
        expect(lstatSync(file).mode & 0o077).toBe(0)
    },
    TIMEOUT,
  )

  test('a job past slurm.time sends its work back and is PAUSED timeout', async () => {
    // Two minutes: the TERM is asked for a quarter of the limit (30 s) before it, and Slurm, checking every
    // 30 s, sends it 60-90 s into the job: time enough for the agent to begin on a busy machine.
    const repo = slurmRepo({ time: '2' })
    const body = [
      "trap 'echo late > late.txt' TERM",
      'echo early > early.txt',
      'while :; do sleep 0.2; done',
    ].join('\n')
    const result = await run(repo, ['--json', '-a', 'exec', '--', agent(body)])
    const record = json<SlurmRecord>(result)
    expect(record).toMatchObject({ status: 'PAUSED', stop_reason: 'timeout' })
    expect(readFileSync(join(record.worktree_dir, 'early.txt'), 'utf8')).toBe('early\n')
    expect(readFileSync(join(record.worktree_dir, 'late.txt'), 'utf8')).toBe('late\n')
  }, 400_000)

  test(
    'without sbatch, --backend slurm is exit 5 naming it; without slurm.spool, exit 2',
    async () => {
      const repo = slurmRepo()
      const bin = tmpDir()
      for (const tool of ['node', 'git', 'sh']) {
        const real = execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim()
        writeFileSync(join(bin, tool), `#!/bin/sh\nexec ${real} "$@"\n`)
        chmodSync(join(bin, tool), 0o755)
      }
      const noSlurm = await cli(['run', '-a', 'exec', '--', 'true'], {
        cwd: repo.dir,
        env: { ...repo.env, PATH: bin },
        process: true,
      })
      expect(noSlurm.exitCode).toBe(5)
      expect(noSlurm.stderr).toContain('sbatch')
      expect(
        existsSync(join(repo.dir, '.harness', 'worktrees')) &&
          readdirSync(join(repo.dir, '.harness', 'worktrees')).length,
      ).toBeFalsy()
      const bare = tmpGitRepo()
      const noSpool = await cli(['run', '--backend', 'slurm', '-a', 'exec', '--', 'true'], {
        cwd: bare.dir,
        env: bare.env,
      })
      expect(noSpool.exitCode).toBe(2)
      expect(noSpool.stderr).toContain('slurm.spool')
      const tmux = await cli(['run', '--tmux', '-a', 'exec', '--', 'true'], { cwd: repo.dir, env: repo.env })
      expect(tmux.exitCode).toBe(2)
      expect(tmux.stderr).toContain('slurm backend does not support --tmux')
    },
    TIMEOUT,
  )

  test(
    'doctor: the cluster, a test-only submission, and with --submit-test a real job on a node',
    async () => {
      const repo = slurmRepo()
      const doctor = await cli(['doctor', '--json', '--submit-test'], {
        cwd: repo.dir,
        env: repo.env,
        timeoutMs: TIMEOUT,
      })
      const checks = json<{ checks: { name: string; status: string; detail: string }[] }>(doctor).checks
      const line = (name: string) => checks.find((check) => check.name === name)
      expect(line('slurm')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining(`cluster ${cluster().name}`),
      })
      expect(line('slurm test-only')).toMatchObject({ status: 'ok' })
      // The default agent is not on the nodes: the job ran on one and says so.
      const submitted = line('slurm submit-test')
      expect(nodeNames().some((node) => submitted?.detail.includes(` on ${node}`))).toBe(true)
    },
    TIMEOUT,
  )

  test(
    'list of 50 RUNNING Slurm sessions asks squeue once',
    async () => {
      const repo = slurmRepo()
      const c = cluster()
      const real = json<SlurmRecord>(
        await run(repo, ['--detach', '--json', '-a', 'exec', '--', agent('exec sleep 600')]),
      )
      const template = readRecord<Record<string, unknown> & { slurm: Record<string, unknown> }>(
        repo.dir,
        real.id,
      )
      for (let i = 0; i < 49; i++) {
        const id = `many${String(i).padStart(4, '0')}`
        writeRecord(repo.dir, repo.env, {
          ...template,
          id,
          slurm: { ...template.slurm, job_id: String(900_000 + i) },
          seal: undefined,
        })
      }
      const counting = tmpDir()
      const count = join(counting, 'count')
      const squeue = execFileSync('sh', ['-c', 'command -v squeue'], { encoding: 'utf8' }).trim()
      writeFileSync(join(counting, 'squeue'), `#!/bin/sh\necho x >> ${count}\nexec ${squeue} "$@"\n`)
      chmodSync(join(counting, 'squeue'), 0o755)
      const env = { ...repo.env, PATH: `${counting}:${repo.env.PATH}` }
      const list = await cli(['session', 'list', '--json'], { cwd: repo.dir, env })
      expect(list.exitCode, list.stderr).toBe(0)
      expect(json<unknown[]>(list)).toHaveLength(50)
      expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(1)
      // A controller that does not answer: the listing still answers from the records, with one warning.
      const down = tmpDir()
      writeFileSync(
        join(down, 'squeue'),
        '#!/bin/sh\necho "squeue: error: Unable to contact slurm controller" >&2\nexit 1\n',
      )
      chmodSync(join(down, 'squeue'), 0o755)
      const unanswered = await cli(['session', 'list', '--json'], {
        cwd: repo.dir,
        env: { ...repo.env, PATH: `${down}:${repo.env.PATH}` },
      })
      expect(unanswered.exitCode, unanswered.stderr).toBe(0)
      const listed = json<{ id: string; status: string }[]>(unanswered)
      expect(listed.find((record) => record.id === real.id)?.status).toBe('RUNNING')
      expect(unanswered.stderr.trim().split('\n')).toHaveLength(1)
      expect(unanswered.stderr).toContain('squeue')
      execFileSync('scancel', ['--me'], { env: c.env })
    },
    TIMEOUT,
  )
})
