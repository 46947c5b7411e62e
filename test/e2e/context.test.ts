import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

// The earlier session's agent prints claude-style events: the last assistant text is the final message.
const RESULT = JSON.stringify({
  type: 'assistant',
  message: { role: 'assistant', content: [{ type: 'text', text: 'Added a.txt; all done.' }] },
})

test('--context-from gives the agent the block before its prompt; --dry-run shows it and makes nothing; a new task on an existing session warns', async () => {
  const repo = tmpGitRepo()
  const agents = fakeAgents(join(repo.dir, '..'), repo.env)
  const first = await finishedSession(repo, `echo a > a.txt && echo '${RESULT}'`)
  const opts = { cwd: repo.dir, env: agents.env }

  const run = await cli(
    ['run', '-a', 'claude', '--json', '--context-from', first.id.slice(0, 6), 'now test it'],
    opts,
  )
  expect(run.exitCode, run.stderr).toBe(0)
  const prompt = agents.starts()[0]?.args?.at(-1) ?? ''
  expect(prompt).toContain(
    `## Session ${first.id}: COMPLETED (exit 0), branch harness/${first.id}\nTask:\n  sh -c`,
  )
  expect(prompt).toContain('Files changed (1):\n  a.txt\nDiff stat against its base:\n   a.txt | 1 +')
  expect(prompt).toContain("The agent's final message:\n  Added a.txt; all done.")
  expect(prompt).toMatch(/--- end of context; the task follows ---\n\nnow test it$/)
  const second = json<{ id: string; context_from: string[]; prompt: string }>(run)
  expect(second.context_from).toEqual([first.id])
  expect(second.prompt).toBe('now test it')

  // The limit applies (context.max_bytes), and --dry-run leaves no record, worktree, branch or agent start.
  const config = join(String(repo.env.XDG_CONFIG_HOME), 'harness')
  mkdirSync(config, { recursive: true })
  writeFileSync(join(config, 'config.json'), JSON.stringify({ context: { max_bytes: 256 } }))
  const records = readRecords(repo.dir).length
  const branches = repo.git('branch', '--list')
  const dry = await cli(
    ['run', '-a', 'claude', '--dry-run', '--json', '--context-from', first.id, 'next'],
    opts,
  )
  expect(dry.exitCode, dry.stderr).toBe(0)
  const plan = json<{ id: string; args: string[]; prompt: string; worktree: string; branch: string }>(dry)
  expect(plan.args.at(-1)).toBe(plan.prompt)
  const block = plan.prompt.slice(0, -'\n\nnext'.length)
  expect(Buffer.byteLength(block)).toBeLessThanOrEqual(256)
  expect(block).toContain('trimmed')
  expect(plan.branch).toBe(`harness/${plan.id}`)
  expect(existsSync(plan.worktree)).toBe(false)
  expect(readRecords(repo.dir)).toHaveLength(records)
  expect(repo.git('branch', '--list')).toBe(branches)
  expect(agents.starts()).toHaveLength(1)
  const text = await cli(['run', '-a', 'claude', '--dry-run', 'next'], opts)
  expect(text.stdout).toMatch(/^dry run: nothing was started or created\n/)
  expect(text.stdout).toMatch(
    /\nargv: {5}claude -p --output-format stream-json --verbose --permission-mode acceptEdits --session-id \S+ next\n/,
  )

  // --session-id of an existing session with another task: a warning, and the prompt goes to the agent.
  const again = await cli(['run', '--session-id', second.id, 'and document it'], opts)
  expect(again.exitCode, again.stderr).toBe(0)
  expect(again.stderr).toContain(`the task differs from session ${second.id}'s`)
  expect(agents.starts()[1]?.args?.at(-1)).toBe('and document it')
})
