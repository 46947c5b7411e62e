import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { runsWith } from '../helpers/require.js'
import {
  CLUSTER_SCRIPT,
  type SlurmCluster,
  slurmMissing,
  startSlurmCluster,
  stopSlurmCluster,
} from '../helpers/slurm.js'
import { tmpDir } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

/**
 * The test cluster itself (scripts/slurm-test-cluster.sh, docs/development/README.md): its nodes are hosts of
 * their own, the submitter's folders are hidden from them, a server on the submit host is reachable from
 * them, and stopping it (or losing its owner) leaves nothing behind.
 */
const runs = runsWith('slurm', 'Slurm test cluster tests', slurmMissing())

/** What of a cluster is still there: its namespaces, its bridge, its daemons, its folder. */
function remains(cluster: SlurmCluster, pids: number[]): string[] {
  // `ip` may complain of a veth whose peer's namespace just went: its complaint is not what is asked.
  const quiet = { encoding: 'utf8' as const, stdio: ['ignore', 'pipe', 'ignore'] as ('ignore' | 'pipe')[] }
  const namespaces = execFileSync('ip', ['netns', 'list'], quiet)
  const links = execFileSync('ip', ['-o', 'link'], quiet)
  const slot = cluster.name.slice(2)
  return [
    ...namespaces
      .split('\n')
      .filter((line) => line.startsWith(`${cluster.name}-`))
      .map((line) => `namespace ${line}`),
    ...(links.includes(`hsbr${slot}:`) ? [`bridge hsbr${slot}`] : []),
    ...pids.filter((pid) => alive(pid)).map((pid) => `process ${pid}`),
    ...(existsSync(cluster.dir) ? [`folder ${cluster.dir}`] : []),
  ]
}

function alive(pid: number): boolean {
  try {
    return !(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? 'Z').startsWith('Z')
  } catch {
    return false
  }
}

function daemons(cluster: SlurmCluster): number[] {
  return ['ctl', 'n1', 'n2', 'munged'].map((name) =>
    Number(readFileSync(join(cluster.dir, 'run', `${name}.pid`), 'utf8').split(' ')[0]),
  )
}

describe.skipIf(!runs)('the Slurm test cluster', () => {
  test('nodes of their own: hostname, address, scratch, the temp folder hidden; a server on the submit host reachable', async () => {
    const secret = tmpDir()
    const cluster = await startSlurmCluster()
    const server = createServer((_, response) => response.end('hello from the submit host'))
    try {
      await new Promise<void>((resolve) => server.listen(0, cluster.submitAddress, resolve))
      const port = (server.address() as { port: number }).port
      for (const node of cluster.nodes) {
        expect(cluster.onNode(node.name, ['hostname']).trim()).toBe(node.name)
        expect(cluster.onNode(node.name, ['ip', '-o', '-4', 'addr', 'show', 'eth0'])).toContain(
          `${node.address}/24`,
        )
        // The temp folder is an empty read-only tmpfs on the node; the cluster's own folder is there.
        expect(cluster.onNode(node.name, ['ls', '-A', tmpdir()])).toBe('')
        expect(
          spawnSync(CLUSTER_SCRIPT, ['exec', cluster.dir, node.key, '--', 'touch', `${secret}-x`]).status,
        ).not.toBe(0)
        expect(cluster.onNode(node.name, ['ls', cluster.spool])).toBe('')
        // Scratch is the node's own.
        cluster.onNode(node.name, ['touch', join(cluster.scratch, `on-${node.name}`)])
        expect(cluster.onNode(node.name, ['ls', cluster.scratch]).trim()).toBe(`on-${node.name}`)
        // The submit host's address on the bridge is reachable from the node (the test's model servers).
        // Not execFileSync: the server answers from this very process.
        const answer = await new Promise<string>((resolve, reject) =>
          execFile(
            CLUSTER_SCRIPT,
            [
              'exec',
              cluster.dir,
              node.key,
              '--',
              'curl',
              '-s',
              '--max-time',
              '60',
              `http://${cluster.submitAddress}:${port}/`,
            ],
            { encoding: 'utf8' },
            (error, stdout) => (error ? reject(error) : resolve(stdout)),
          ),
        )
        expect(answer).toBe('hello from the submit host')
      }
      expect(execFileSync('ls', ['-A', cluster.scratch], { encoding: 'utf8' })).toBe('')
    } finally {
      server.close()
      stopSlurmCluster(cluster)
    }
  })

  test('stop leaves nothing: no daemon, namespace, bridge, job process or folder', async () => {
    const cluster = await startSlurmCluster()
    const pids = daemons(cluster)
    // A job still running when the cluster stops: slurmstepd and its processes outlive slurmd.
    execFileSync(
      'sbatch',
      ['--export=NONE', '--output=/dev/null', `--chdir=${cluster.spool}`, '--wrap=exec sleep 600'],
      {
        env: cluster.env,
      },
    )
    await waitFor('the job to run', () =>
      cluster.nodes.some((node) => cluster.jobProcesses(node.name).length > 0),
    )
    const jobPids = cluster.nodes.flatMap((node) => cluster.jobProcesses(node.name))
    expect(remains(cluster, [...pids, ...jobPids]).length).toBeGreaterThan(0)
    stopSlurmCluster(cluster)
    expect(remains(cluster, [...pids, ...jobPids])).toEqual([])
  })

  test('a cluster whose owner dies is stopped by its watchdog', async () => {
    const owner = spawn('sleep', ['600'], { stdio: 'ignore' })
    const dir = execFileSync(CLUSTER_SCRIPT, ['start', '--owner', String(owner.pid), '--hide', tmpDir()], {
      encoding: 'utf8',
      timeout: 300_000,
    }).trim()
    const name = readFileSync(join(dir, 'cluster.env'), 'utf8').match(/^CLUSTER_NAME=(.*)$/m)?.[1] ?? ''
    const cluster = { dir, name } as SlurmCluster
    const pids = daemons(cluster)
    owner.kill('SIGKILL')
    await waitFor('the watchdog to stop the cluster', () => remains(cluster, pids).length === 0)
  })

  test('three clusters at once do not meet', async () => {
    const clusters = await Promise.all([startSlurmCluster(), startSlurmCluster(), startSlurmCluster()])
    try {
      expect(new Set(clusters.map((c) => c.name)).size).toBe(3)
      expect(new Set(clusters.map((c) => c.submitAddress)).size).toBe(3)
      const ids = clusters.map((c) =>
        execFileSync(
          'sbatch',
          ['--parsable', '--export=NONE', '--output=/dev/null', `--chdir=${c.spool}`, '--wrap=true'],
          {
            env: c.env,
            encoding: 'utf8',
          },
        ).trim(),
      )
      expect(ids.map(Number)).toEqual(clusters.map((c) => c.firstJobId))
    } finally {
      for (const c of clusters) stopSlurmCluster(c)
    }
  })
})
