import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { runsWith } from '../helpers/require.js'
import { slurmMissing, useSlurmCluster } from '../helpers/slurm.js'
import { tmpGitRepo } from '../helpers/tmp.js'
import {
  claudeEnv,
  claudeWorkingDirectory,
  claudeWrite,
  cliTest,
  FILE,
  FIRST_PROMPT,
  useInstalledClis,
} from './drive.js'
import { realClisPrefix } from './install.js'
import { anthropicHasToolResult, anthropicServer, type ScriptedServer } from './model-server.js'

/**
 * claude, the real CLI, on the Slurm test cluster (SPEC §14 `slurm`): the scripted Anthropic server listens on
 * the cluster's bridge, which the nodes reach; the session's first run writes a file on a node, and its resume,
 * on whichever node Slurm picks, carries the first conversation (the agent's HOME and working folder are the same
 * on every node).
 */
const clusterRuns = runsWith('slurm', 'real claude on the Slurm cluster', slurmMissing())
useInstalledClis('claude')

interface Rec {
  id: string
  status: string
  worktree_dir: string
  slurm?: { node?: string }
}

describe.skipIf(!clusterRuns)('claude on a Slurm cluster', () => {
  // The nodes see the installed CLIs, wherever the checkout is (a fresh clone under the temp folder or the home,
  // both hidden from them), as a site's software share; the test's repositories stay hidden.
  const prefix = realClisPrefix()
  mkdirSync(prefix, { recursive: true })
  const cluster = useSlurmCluster(undefined, [prefix])
  const servers: ScriptedServer[] = []
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
  })

  cliTest(
    'a Write on a node comes back to the worktree, and the resume is exact on the cluster',
    async (bin) => {
      const c = cluster()
      const model = await anthropicServer(
        (request) => (anthropicHasToolResult(request) ? null : claudeWrite(claudeWorkingDirectory(request))),
        c.submitAddress,
      )
      servers.push(model)
      const repo = tmpGitRepo()
      const agentEnv = claudeEnv(model.url, 'sk-ant-scripted-test-key')
      const configDir = join(repo.home, '.config', 'harness')
      mkdirSync(configDir, { recursive: true })
      writeFileSync(
        join(configDir, 'config.json'),
        JSON.stringify({
          backend: 'slurm',
          slurm: { spool: c.spool, scratch: c.scratch, env: ['PATH', ...Object.keys(agentEnv)] },
        }),
      )
      const env = {
        ...repo.env,
        ...agentEnv,
        SLURM_CONF: c.env.SLURM_CONF,
        PATH: `${bin}${delimiter}/usr/bin${delimiter}/bin`,
      }
      const harness = (args: string[]) => cli(args, { cwd: repo.dir, env, timeoutMs: 420_000, process: true })
      const first = await harness(['run', '-a', 'claude', '-P', 'supervised', FIRST_PROMPT, '--json'])
      expect(first.exitCode, first.stderr).toBe(0)
      const record = json<Rec>(first)
      expect(record.status).toBe('COMPLETED')
      expect(c.nodes.map((node) => node.name)).toContain(record.slurm?.node)
      expect(readFileSync(join(record.worktree_dir, FILE), 'utf8')).toBe('hello\n')
      // The working folder claude was told of is node-local scratch, never the user's checkout.
      expect(claudeWorkingDirectory(model.requests[0] ?? { path: '', body: {}, text: '' })).toContain(
        c.scratch,
      )
      const answered = model.requests.length
      const resumed = await harness(['session', 'resume', record.id, 'and now the second part', '--json'])
      expect(resumed.exitCode, resumed.stderr).toBe(0)
      const text = model.requests[answered]?.text
      expect(text).toContain(FIRST_PROMPT)
      expect(text).toContain(FILE)
      expect(text).toContain('and now the second part')
    },
    600_000,
  )
})
