import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { fakeAgents } from '../helpers/agents.js'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { editRecord, recordPath, writeRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

/** What a new user hit following the README (issue 25): each item, as the user met it. */

const harness = (repo: TmpRepo, ...args: string[]) => cli(args, { cwd: repo.dir, env: repo.env })

describe('merge', () => {
  test('the dry run\'s "run it:" line keeps --squash, --rebase and -m', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo a > a.txt && git add a.txt && git commit -qm a')
    const squash = await harness(
      repo,
      'session',
      'merge',
      session.id,
      '--dry-run',
      '--squash',
      '-m',
      "Add a's",
    )
    expect(squash.exitCode, squash.stderr).toBe(0)
    expect(squash.stdout).toContain(`run it: harness session merge ${session.id} --squash -m 'Add a'\\''s'\n`)
    const rebase = await harness(repo, 'session', 'merge', session.id, '--dry-run', '--rebase')
    expect(rebase.stdout).toContain(`run it: harness session merge ${session.id} --rebase\n`)
  })

  test('--squash -m TEXT puts TEXT on the commit on the base branch', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(
      repo,
      'echo a > a.txt && git add a.txt && git commit -qm a && echo b > b.txt',
    )
    const done = await harness(repo, 'session', 'merge', session.id, '--squash', '-m', 'Add a and b')
    expect(done.exitCode, done.stderr).toBe(0)
    expect(repo.git('log', '-1', '--format=%B', 'main')).toBe('Add a and b')
    // The commit of the uncommitted file on the session's branch keeps the default message.
    expect(repo.git('log', '-1', '--format=%s', String(session.git_branch))).toBe(
      `sh -c echo a > a.txt && git add a.txt && git commit -qm a && echo b > b.txt (harness session ${session.id})`,
    )
  })

  test('a merged session is not merged again (exit 4) until it has work since', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo a > a.txt && git add a.txt && git commit -qm a')
    expect((await harness(repo, 'session', 'merge', session.id, '--squash')).exitCode).toBe(0)
    const landed = repo.git('rev-parse', 'main')
    for (const args of [['--squash'], [], ['--dry-run', '--squash']]) {
      const again = await harness(repo, 'session', 'merge', session.id, ...args)
      expect(again.exitCode, args.join(' ')).toBe(4)
      expect(again.stdout + again.stderr).toContain(`session "${session.id}" was already merged into "main"`)
    }
    const asJson = await harness(repo, 'session', 'merge', session.id, '--json')
    expect(JSON.parse(asJson.stderr).error.code).toBe('ALREADY_MERGED')
    expect(repo.git('rev-parse', 'main')).toBe(landed)
    // New work in the worktree: it lands, and only that work is counted.
    writeFileSync(join(session.worktree_dir, 'c.txt'), 'c\n')
    const more = await harness(repo, 'session', 'merge', session.id, '--squash', '--json')
    expect(more.exitCode, more.stderr).toBe(0)
    expect(json<{ commits: number; outcome: string }>(more)).toMatchObject({ outcome: 'merged', commits: 1 })
    expect(repo.git('ls-tree', '--name-only', 'main').split('\n')).toEqual(['README.md', 'a.txt', 'c.txt'])
    expect(repo.git('rev-list', '--count', `${landed}..main`)).toBe('1')
  })

  test('a dry run with only uncommitted files says so, not "1 commit to merge"', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo b > b.txt')
    const dry = await harness(repo, 'session', 'merge', session.id, '--dry-run')
    expect(dry.exitCode, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`would first commit 1 uncommitted file on ${session.git_branch}`)
    expect(dry.stdout).not.toMatch(/commits? .*to merge/)
    const both = await finishedSession(
      repo,
      'echo a > a.txt && git add a.txt && git commit -qm a && echo b > b.txt',
    )
    const dry2 = await harness(repo, 'session', 'merge', both.id, '--dry-run')
    expect(dry2.stdout).toContain(`1 commit on ${both.git_branch} to merge\n`)
  })

  test('"1 file changed", not "1 files changed"', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo b > b.txt', ['--prompt', 'b'])
    writeFileSync(join(session.worktree_dir, 'c.txt'), 'c\n')
    const taken = await harness(repo, 'session', 'checkpoint', session.id)
    expect(taken.exitCode, taken.stderr).toBe(0)
    expect(taken.stdout).toContain('(1 file changed)')
    const show = await harness(repo, 'session', 'show', session.id)
    expect(show.stdout).toMatch(/#1 .* 1 file {2}/)
    expect(show.stdout).not.toContain('1 files')
  })
})

describe('durations', () => {
  test('config set takes a bare number; reports print it with its unit', async () => {
    const repo = tmpGitRepo()
    await finishedSession(repo)
    for (const [key, value] of [
      ['cleanup.older_than', '7'],
      ['cleanup.auto', '30'],
      ['checkpoint.interval', '90'],
    ]) {
      const set = await harness(repo, 'config', 'set', key as string, value as string)
      expect(set.exitCode, set.stderr).toBe(0)
    }
    expect((await harness(repo, 'config', 'get', 'cleanup.older_than')).stdout).toBe('7\n')
    const configured = await harness(repo, 'session', 'cleanup', '--dry-run')
    expect(configured.exitCode, configured.stderr).toBe(0)
    expect(configured.stdout).toContain('1 younger than 7d')
    const flag = await harness(repo, 'session', 'cleanup', '--dry-run', '--older-than', '3')
    expect(flag.stdout).toContain('1 younger than 3d')
    const asJson = await harness(repo, 'session', 'cleanup', '--dry-run', '--json')
    expect(json(asJson)).toMatchObject({ older_than: '7d', older_than_ms: 7 * 86_400_000 })
    // A bad one is still refused, saying what a bare number means there.
    const bad = await harness(repo, 'config', 'set', 'checkpoint.interval', '-5')
    expect(bad.exitCode).not.toBe(0)
    expect(bad.stderr).toContain('invalid duration -5 (use a number of seconds, or 90m, 12h, 7d, 2w)')
  })
})

describe('worktree.setup', () => {
  test("a failing setup from the user's config is blamed on that file; its output is shown once", async () => {
    const repo = tmpGitRepo()
    const userFile = join(repo.home, '.config', 'harness', 'config.json')
    mkdirSync(dirname(userFile), { recursive: true })
    const lines = Array.from({ length: 30 }, (_, i) => `echo line-${i}`).join('; ')
    writeFileSync(userFile, JSON.stringify({ worktree: { setup: `${lines}; exit 3` } }))
    const run = await harness(repo, 'run', '-a', 'exec', '--', 'true')
    expect(run.exitCode).toBe(5)
    expect(run.stderr).toContain(`hint: fix "worktree.setup" in ${userFile} (its output is above)\n`)
    expect(run.stderr).not.toContain('.harness/config.json')
    expect(run.stderr).toContain('setup| line-29\n')
    expect(run.stderr).not.toContain('  | line-29')
  })
})

describe('context.max_bytes', () => {
  test('400 and 300 bytes give a sensible block: the task whole, markers shorter than what they cut, the end line whole', async () => {
    const repo = tmpGitRepo()
    const first = await finishedSession(repo, 'for i in 1 2 3 4 5 6; do echo $i > file-$i.txt; done', [
      '--prompt',
      'write six files',
    ])
    const agents = fakeAgents(join(repo.dir, '..'), repo.env)
    const blocks: string[] = []
    for (const max of [400, 300]) {
      const set = await harness(repo, 'config', 'set', 'context.max_bytes', String(max))
      expect(set.exitCode, set.stderr).toBe(0)
      const dry = await cli(
        ['run', '-a', 'claude', '--dry-run', '--json', '--context-from', first.id, 'next'],
        { cwd: repo.dir, env: agents.env },
      )
      expect(dry.exitCode, dry.stderr).toBe(0)
      const block = json<{ prompt: string }>(dry).prompt.slice(0, -'\n\nnext'.length)
      expect(Buffer.byteLength(block), block).toBeLessThanOrEqual(max)
      expect(block, block).toContain('Task:\n  write six files\n')
      expect(block.startsWith('Context from earlier harness sessions')).toBe(true)
      expect(block.endsWith('\n--- end of context (trimmed to fit); the task follows ---')).toBe(true)
      expect(block).not.toContain('1 more lines')
      // Each marker stands for more than itself: the lines it replaced were longer.
      for (const match of block.matchAll(/\[… (\d+) more lines? trimmed\]/g)) {
        expect(Number(match[1])).toBeGreaterThan(1)
      }
      blocks.push(block)
    }
    expect(blocks[0]).toContain('Files changed (6):\n  file-1.txt\n')
  })
})

describe('messages', () => {
  test('no doubled prefixes: the task-differs warning and chain run', async () => {
    const repo = tmpGitRepo()
    const agents = fakeAgents(join(repo.dir, '..'), repo.env)
    const opts = { cwd: repo.dir, env: agents.env }
    const first = json<{ id: string }>(await cli(['run', '-a', 'claude', '--json', 'task one'], opts))
    const again = await cli(['run', '--session-id', first.id, 'task two'], opts)
    expect(again.stderr).toContain(`harness: warning: the task differs from session ${first.id}'s`)
    expect(again.stderr).not.toContain('warning: harness:')
    const created = await harness(repo, 'chain', 'create', 'auth', '--sessions', first.id)
    expect(created.exitCode, created.stderr).toBe(0)
    const run = await harness(repo, 'chain', 'run', 'auth')
    expect(run.exitCode, run.stderr).toBe(0)
    expect(run.stdout + run.stderr).toContain('harness: chain auth: every step is COMPLETED, nothing to run')
  })

  test('hints: run --session suggests --session-id; session chain points at harness chain', async () => {
    const repo = tmpGitRepo()
    const run = await harness(repo, 'run', '--session', 'abcd1234', 'go on')
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('hint: did you mean --session-id?')
    const chain = await harness(repo, 'session', 'chain', 'create', 'auth')
    expect(chain.exitCode).toBe(2)
    expect(chain.stderr).toContain('hint: did you mean "harness chain"?')
  })

  test('wait -q prints nothing on stdout; archive with nothing to do says one thing', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    const wait = await harness(repo, '-q', 'session', 'wait', session.id)
    expect(wait.exitCode, wait.stderr).toBe(0)
    expect(wait.stdout).toBe('')
    expect((await harness(repo, 'session', 'wait', session.id)).stdout).toBe(
      `session ${session.id} COMPLETED (exit 0)\n`,
    )
    const archive = await harness(repo, 'session', 'archive')
    expect(archive.exitCode, archive.stderr).toBe(0)
    expect(archive.stdout).toBe('Nothing to archive.\nLeft alone: 1 younger than 7d.\n')
  })

  test('list --sort updated shows AGE by update time', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    editRecord(repo, session.id, (record) => {
      record.created_at = new Date(Date.now() - 3 * 86_400_000).toISOString()
      record.updated_at = new Date(Date.now() - 2 * 3_600_000).toISOString()
    })
    const byCreation = await harness(repo, 'session', 'list')
    expect(byCreation.stdout).toContain('3d ago')
    const byUpdate = await harness(repo, 'session', 'list', '--sort', 'updated')
    expect(byUpdate.exitCode, byUpdate.stderr).toBe(0)
    expect(byUpdate.stdout).toContain('2h ago')
    expect(byUpdate.stdout).not.toContain('3d ago')
  })

  test('export --format md --json is a usage error', async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo)
    const both = await harness(repo, 'session', 'export', session.id, '--format', 'md', '--json')
    expect(both.exitCode).toBe(2)
    expect(both.stdout).toBe('')
    expect(JSON.parse(both.stderr).error.message).toBe('--format md and --json ask for two different outputs')
    expect((await harness(repo, 'session', 'export', session.id, '--json')).exitCode).toBe(0)
    expect(
      (await harness(repo, 'session', 'export', session.id, '--format', 'json', '--json')).exitCode,
    ).toBe(0)
  })

  test("adopt --yes of a record naming another session's worktree warns", async () => {
    const repo = tmpGitRepo()
    const owner = await finishedSession(repo)
    const record = JSON.parse(readFileSync(recordPath(repo, owner.id), 'utf8')) as Record<string, unknown>
    writeRecord(repo.dir, repo.env, { ...record, id: 'copy0001', seal: undefined }, { seal: false })
    const adopt = await harness(repo, 'session', 'adopt', 'copy0001', '--yes', '--json')
    expect(adopt.exitCode, adopt.stderr).toBe(0)
    expect(adopt.stderr).toContain(
      `harness: warning: session "copy0001" names the worktree of session "${owner.id}" (${owner.worktree_dir})`,
    )
    expect(
      json<{ adopted: { shares_worktree_with: string[] }[] }>(adopt).adopted[0]?.shares_worktree_with,
    ).toEqual([owner.id])
  })
})

describe("the README's claims, as the tool does them", () => {
  // The README and the docs it points to for commands and continuity, read as one text.
  const readme = ['../../README.md', '../../docs/commands.md', '../../docs/continuity.md']
    .map((file) => readFileSync(new URL(file, import.meta.url), 'utf8'))
    .join('\n')
    .replace(/\s+/g, ' ')

  test("cleanup deletes a session's checkpoint refs and keeps its --force snapshot refs", async () => {
    const repo = tmpGitRepo()
    const session = await finishedSession(repo, 'echo b > b.txt')
    expect(
      repo.git('for-each-ref', '--format=%(refname)', `refs/harness/${session.id}/checkpoints/`),
    ).not.toBe('')
    const cleanup = await harness(repo, 'session', 'cleanup', '--older-than', '0', '--force')
    expect(cleanup.exitCode, cleanup.stderr).toBe(0)
    const refs = repo.git('for-each-ref', '--format=%(refname)', `refs/harness/${session.id}/`).split('\n')
    expect(refs.filter((ref) => ref.includes('/checkpoints/'))).toEqual([])
    expect(refs).toContain(`refs/harness/${session.id}/worktree`)
    expect(readme).not.toContain('Refs under `refs/harness/` are never deleted')
    expect(readme).toContain(
      "A session's checkpoint refs (`refs/harness/<id>/checkpoints/<n>`) are another matter",
    )
  })

  test('a branch landed by merge --squash counts as merged; the --context-from example lands its files first', () => {
    // The behaviour is test/e2e/merge.test.ts "--squash is one commit; afterwards cleanup removes the session".
    expect(readme).not.toMatch(/Squash merges and rebases are not recognised/)
    expect(readme).toContain(
      'A branch landed by `harness session merge` (`--squash` and `--rebase` too) counts as merged',
    )
    const example = readme.slice(readme.indexOf('## Context from earlier sessions'))
    expect(example.indexOf('harness session merge 3f9a')).toBeGreaterThan(0)
    expect(example.indexOf('harness session merge 3f9a')).toBeLessThan(
      example.indexOf('--context-from 3f9a "implement'),
    )
  })
})

describe('what a new user hit, round 2 (issue 37)', () => {
  test('harness trust without a project config: exit 0, one line; --json says nothing exists', async () => {
    const repo = tmpGitRepo()
    const trust = await harness(repo, 'trust')
    expect(trust.exitCode, trust.stderr).toBe(0)
    expect(trust.stdout).toBe(
      `nothing to trust yet: ${join(repo.dir, '.harness', 'config.json')} does not exist\n`,
    )
    expect(trust.stderr).toBe('')
    const asJson = await harness(repo, 'trust', '--json')
    expect(json(asJson)).toMatchObject({ exists: false, sha256: null, trusted: true })
    // Nothing was stored, and nothing was made in the project.
    expect(existsSync(join(repo.home, '.local', 'state', 'harness', 'trust.json'))).toBe(false)
  })

  test('.harness/.gitignore lets config.json be committed, and nothing else; an old "*" file is replaced', async () => {
    const repo = tmpGitRepo()
    await finishedSession(repo)
    const ignore = join(repo.dir, '.harness', '.gitignore')
    expect(readFileSync(ignore, 'utf8')).toBe(
      '# Written by harness: its state stays out of git; config.json may be committed.\n*\n!config.json\n',
    )
    expect(repo.git('status', '--porcelain')).toBe('')
    expect((await harness(repo, 'config', 'set', 'defaults.agent', 'exec')).exitCode).toBe(0)
    repo.git('add', '.harness')
    expect(repo.git('diff', '--cached', '--name-only')).toBe('.harness/config.json')
    // A project made by an older version: its "*" is replaced by the next command that writes.
    writeFileSync(ignore, '*\n')
    await finishedSession(repo)
    expect(readFileSync(ignore, 'utf8')).toContain('!config.json\n')
    // One the user edited is theirs.
    writeFileSync(ignore, '*\n!config.json\n!notes.md\n')
    await finishedSession(repo)
    expect(readFileSync(ignore, 'utf8')).toBe('*\n!config.json\n!notes.md\n')
  })

  test('show marks the files a run changed: + new, ~ modified, - deleted', async () => {
    const repo = tmpGitRepo()
    repo.write('old.txt', 'old\n')
    repo.git('add', 'old.txt')
    repo.git('commit', '-qm', 'old')
    const session = await finishedSession(repo, 'echo new > new.txt && echo more >> README.md && rm old.txt')
    const show = await harness(repo, 'session', 'show', session.id)
    expect(show.exitCode, show.stderr).toBe(0)
    expect(show.stdout).toContain(
      'Files modified (3: 1 new, 1 modified, 1 deleted):\n  ~ README.md\n  + new.txt\n  - old.txt\n',
    )
    expect(json(await harness(repo, 'session', 'show', session.id, '--json'))).toMatchObject({
      files_modified: ['README.md', 'new.txt', 'old.txt'],
      files_added: ['new.txt'],
      files_deleted: ['old.txt'],
    })
  })

  test("an agent killed from outside is FAILED with runs[].signal SIGKILL (KILLED is harness's kill); the docs say so", async () => {
    const repo = tmpGitRepo()
    const run = await harness(repo, 'run', '-a', 'exec', '--detach', '--json', '--', 'sleep', '600')
    expect(run.exitCode, run.stderr).toBe(0)
    const { id, pid } = json<{ id: string; pid: number }>(run)
    process.kill(pid, 'SIGKILL')
    const wait = await harness(repo, 'session', 'wait', id)
    expect(wait.exitCode).toBe(137)
    const record = json<{ status: string; exit_code: number; runs: { signal: string }[] }>(
      await harness(repo, 'session', 'show', id, '--json'),
    )
    expect(record).toMatchObject({ status: 'FAILED', exit_code: 137 })
    expect(record.runs[0]?.signal).toBe('SIGKILL')
    const commands = readFileSync(new URL('../../docs/record.md', import.meta.url), 'utf8').replace(
      /\s+/g,
      ' ',
    )
    expect(commands).toContain("`KILLED` means harness's own kill")
    expect(commands).toContain(
      'its run keeps `signal: "SIGKILL"` (`runs[].signal`) and the record `exit_code: 137`',
    )
  })
})
