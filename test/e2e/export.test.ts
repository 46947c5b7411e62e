import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { tmpGitRepo } from '../helpers/tmp.js'

const FIXTURE = new URL('../fixtures/export/two-runs.md.txt', import.meta.url)

test('export: a session with 2 runs, 2 checkpoints and changed files, as Markdown and as JSON', async () => {
  const repo = tmpGitRepo()
  repo.write('src/app.ts', 'one\ntwo\nthree\n')
  repo.git('add', '-A')
  repo.git('commit', '-q', '-m', 'app')
  const opts = { cwd: repo.dir, env: repo.env }
  // Each run changes files (a run-end checkpoint each) and prints a line with a run of four backticks.
  const script = [
    'printf "run\\n" >> notes.md',
    'printf "one\\n2\\nthree\\nfour\\n" > src/app.ts',
    'echo "done: \\`\\`\\`\\` | <b>not html</b>"',
  ].join('; ')
  const session = await finishedSession(repo, script, ['--session-id', 'exp1'])
  const resumed = await cli(['session', 'resume', session.id, '--json'], opts)
  expect(resumed.exitCode, resumed.stderr).toBe(0)

  const md = await cli(['session', 'export', session.id], opts)
  expect(md.exitCode, md.stderr).toBe(0)
  const normalized = md.stdout
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<time>')
    .replace(/`[0-9a-f]{12}`/g, '`<commit>`')
    .replace(/\| (\d+ms|\d+s|\d+m \d\ds) \|/g, '| <duration> |')
  if (process.env.UPDATE_FIXTURES) writeFileSync(FIXTURE, normalized)
  expect(normalized).toBe(readFileSync(FIXTURE, 'utf8'))

  const out = await cli(['session', 'export', session.id, '--format', 'json'], opts)
  expect(out.exitCode, out.stderr).toBe(0)
  const data = json<Record<string, unknown>>(out)
  expect(data).toMatchObject({
    id: 'exp1',
    agent: 'exec',
    status: 'COMPLETED',
    runs: [
      { n: 1, kind: 'start', exit_code: 0 },
      { n: 2, kind: 'resume', exit_code: 0 },
    ],
    checkpoints: [
      { n: 0, trigger: 'run-end' },
      { n: 1, trigger: 'run-end' },
    ],
    changes: {
      source: 'worktree',
      files: [
        { path: 'notes.md', added: 2, deleted: 0 },
        { path: 'src/app.ts', added: 2, deleted: 1 },
      ],
    },
  })
  const runs = data.runs as { duration_ms: number }[]
  expect(data.run_time_ms).toBe(runs.reduce((sum, run) => sum + run.duration_ms, 0))
  const checkpoints = execFileSync('jq', ['-c', '[.checkpoints[].n]'], {
    input: out.stdout,
    encoding: 'utf8',
  })
  expect(checkpoints.trim()).toBe('[0,1]')
  // An unknown --format: test/unit/cli/command-seam.test.ts.
})
