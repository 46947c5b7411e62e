import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'

/**
 * scripts/slurm-test-cluster.sh: starts, stops and enters a throw-away cluster (docs/development/README.md).
 */
export const CLUSTER_SCRIPT = fileURLToPath(new URL('../../scripts/slurm-test-cluster.sh', import.meta.url))

export interface SlurmNode {
  /** Its hostname and Slurm node name (`hs<N>-n1`). */
  name: string
  /** Its key in the cluster's folder (`n1`, `n2`). */
  key: string
  address: string
}

/** A running test cluster: a controller and two compute nodes on a bridge of their own. */
export interface SlurmCluster {
  dir: string
  /** Slurm's ClusterName. */
  name: string
  /** The environment of the submit host: the test's own, with SLURM_CONF naming this cluster. */
  env: NodeJS.ProcessEnv
  /** The submit host's address on the bridge: a server listening there is reachable from every node. */
  submitAddress: string
  nodes: SlurmNode[]
  /** A folder the submit host and every node see (a site's shared filesystem): slurm.spool goes here. */
  spool: string
  /** Node-local scratch: a tmpfs of each node's own at this same path (empty on the submit host). */
  scratch: string
  /** A folder every node sees, for the test's agents (the nodes do not see the temp folder of the tests). */
  bin: string
  firstJobId: number
  /** Runs a command inside a node's namespaces (network, hostname, mounts); its standard output. */
  onNode(node: string, argv: string[]): string
  /** The processes of a node other than its slurmd: what its jobs left running. */
  jobProcesses(node: string): number[]
}

/** Why no cluster can run here, or undefined when one can (root, Slurm's daemons, munge, namespaces). */
export function slurmMissing(): string | undefined {
  if (process.platform !== 'linux') return 'Slurm test clusters need Linux'
  if (process.getuid?.() !== 0) return 'a test cluster needs root (network namespaces, mounts, daemons)'
  const missing = ['slurmctld', 'slurmd', 'sbatch', 'munged', 'ip', 'nsenter', 'unshare'].filter(
    (tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0,
  )
  if (missing.length)
    return `not installed: ${missing.join(', ')} (apt-get install slurmctld slurmd slurm-client munge)`
  return undefined
}

function readEnvFile(path: string): Map<string, string> {
  const values = new Map<string, string>()
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) values.set(line.slice(0, at), line.slice(at + 1))
  }
  return values
}

/**
 * Starts a cluster owned by this process (its watchdog stops it if this process dies without stopping it).
 * `hide`: folders the nodes must not see. By default the temp folder, where the tests make repositories, and
 * the user's home: the nodes are other hosts, and a job's start runs the user's login shell there (the job loads
 * the login environment), which on this machine ran `pyenv rehash` and, with several jobs starting at once,
 * waited a minute on its lock. `show`: folders inside those that the nodes see all the same (the real agent
 * CLIs, installed under the checkout, as a site's software share).
 */
export async function startSlurmCluster(
  hide: string[] = [tmpdir(), homedir()],
  show: string[] = [],
): Promise<SlurmCluster> {
  const args = [
    'start',
    '--owner',
    String(process.pid),
    ...hide.flatMap((dir) => ['--hide', dir]),
    ...show.flatMap((dir) => ['--show', dir]),
  ]
  const dir = await new Promise<string>((resolve, reject) =>
    execFile(CLUSTER_SCRIPT, args, { timeout: 300_000, encoding: 'utf8' }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`the test cluster did not start: ${stderr || error.message}`))
        : resolve(stdout.trim()),
    ),
  )
  const facts = readEnvFile(`${dir}/cluster.env`)
  const get = (key: string) => {
    const value = facts.get(key)
    if (value === undefined) throw new Error(`${dir}/cluster.env has no ${key}`)
    return value
  }
  const addresses = get('NODE_ADDRESSES').split(' ')
  const nodes = get('NODES')
    .split(' ')
    .map((name, i) => ({ name, key: `n${i + 1}`, address: addresses[i] ?? '' }))
  const keyOf = (node: string) => nodes.find((n) => n.name === node || n.key === node)?.key ?? node
  return {
    dir,
    name: get('CLUSTER_NAME'),
    env: { ...process.env, SLURM_CONF: get('SLURM_CONF') },
    submitAddress: get('SUBMIT_ADDRESS'),
    nodes,
    spool: get('SPOOL'),
    scratch: get('SCRATCH'),
    bin: get('BIN'),
    firstJobId: Number(get('FIRST_JOB_ID')),
    onNode: (node, argv) =>
      execFileSync(CLUSTER_SCRIPT, ['exec', dir, keyOf(node), '--', ...argv], {
        encoding: 'utf8',
        timeout: 60_000,
      }),
    jobProcesses: (node) => {
      const key = keyOf(node)
      const slurmd = readFileSync(`${dir}/run/${key}.pid`, 'utf8').split(' ')[0]
      const namespace = `${get('CLUSTER_NAME')}-${key}`
      const pids = spawnSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8' }).stdout
      return pids
        .split('\n')
        .filter((pid) => pid && pid !== slurmd)
        .map(Number)
    },
  }
}

/** Stops a cluster by its daemons' pids and removes everything it made (namespaces, bridge, folder). */
export function stopSlurmCluster(cluster: SlurmCluster): void {
  execFileSync(CLUSTER_SCRIPT, ['stop', cluster.dir], { timeout: 120_000 })
}

/**
 * A cluster for the tests of one file: started before the first, stopped after the last whatever they did (and
 * by the watchdog if the worker dies). One per file rather than one per worker: a file sees only its own jobs,
 * job ids and spool, and starting one takes under a second.
 */
export function useSlurmCluster(hide?: string[], show?: string[]): () => SlurmCluster {
  let cluster: SlurmCluster | undefined
  beforeAll(async () => {
    cluster = await startSlurmCluster(hide, show)
  }, 300_000)
  afterAll(() => {
    if (cluster) stopSlurmCluster(cluster)
  })
  return () => {
    if (!cluster) throw new Error('the Slurm test cluster did not start')
    return cluster
  }
}
