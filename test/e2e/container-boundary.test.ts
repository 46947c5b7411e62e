import { execFileSync, spawn } from 'node:child_process'
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { containerMounts } from '../../src/sessions/backends/container/mounts.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { sessionContainers, TEST_IMAGE, usableEngine } from '../helpers/containers.js'
import { nestedRepoWithFilter } from '../helpers/hostile.js'
import { type BackendRecord, readRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { canMount, mountTmpfs, unmountAfterAll } from '../helpers/tmpfs.js'
import { waitFor } from '../helpers/tmux.js'

/**
 * The container boundary (SPEC §10 "What comes back from an agent is input", §14; docs/security.md and
 * docs/backends.md): attacks an agent inside a real podman container can make on the host through what it
 * writes, and faults while its work comes back. Each of these worked on main; the marker file an attacker's
 * command would write is the proof that nothing ran.
 */
const usable = usableEngine()
if (!usable.engine) console.log(`container boundary tests skipped: ${usable.why}`)

interface Record extends BackendRecord {
  base_dir: string
  container?: {
    id: string
    git_dir?: string
    collected?: { kind: string; reason?: string; commits?: number }
  }
}

const GIT_NAMES = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']

/** A repository whose user config sends sessions into the test image, with mkfifo committed in it (tools/). */
function containerRepo(repo: TmpRepo = tmpGitRepo()): TmpRepo {
  const configDir = join(repo.home, '.config', 'harness')
  mkdirSync(configDir, { recursive: true })
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({ backend: 'container', container: { image: TEST_IMAGE, env: GIT_NAMES } }),
  )
  // The test image has no mkfifo: the agent runs this machine's, committed in the repository.
  const mkfifo = execFileSync('sh', ['-c', 'command -v mkfifo'], { encoding: 'utf8' }).trim()
  mkdirSync(join(repo.dir, 'tools'), { recursive: true })
  cpSync(mkfifo, join(repo.dir, 'tools', 'mkfifo'))
  repo.git('add', 'tools')
  repo.git('commit', '-q', '-m', 'tools')
  return repo
}

/** `harness run --json -a exec -- sh -c <script>` in `repo` (a foreground container run). */
function run(repo: TmpRepo, script: string, extra: string[] = [], env = repo.env) {
  return cli(['run', '--json', ...extra, '-a', 'exec', '--', 'sh', '-c', script], { cwd: repo.dir, env })
}

/** The private clone's folder of the session the agent runs in, as the agent sees it. */
const CLONE = '"$HARNESS_DIR/agents/$HARNESS_SESSION_ID/container"'

describe.skipIf(!usable.engine)('the container boundary (podman)', () => {
  test("renaming the private clone's folder to write its own config: refused, and nothing of it runs on the host", async () => {
    const repo = containerRepo()
    const pwned = join(tmpDir(), 'pwned')
    // A partial clone whose promisor remote is reached by core.sshCommand: any git on the host that looks up a
    // missing object in it (`git rev-parse` of its branch) would run the agent's command.
    const config = [
      '[core]',
      '\trepositoryformatversion = 1',
      `\tsshCommand = "sh -c 'echo ssh >> ${pwned}'"`,
      '[extensions]',
      '\tpartialClone = origin',
      '[remote "origin"]',
      '\turl = ssh://example.invalid/x',
      '\tpromisor = true',
    ].join('\n')
    const script = [
      `C=${CLONE}`,
      'B="refs/heads/harness/$HARNESS_SESSION_ID"',
      'if mv "$C" "$C.moved" 2>/dev/null; then echo moved > moved.txt; else echo refused > moved.txt; fi',
      'mkdir -p "$C/git/refs/heads/harness" "$C/git/objects" 2>/dev/null',
      `cat > "$C/git/config" 2>/dev/null <<'EOF'\n${config}\nEOF`,
      'echo "ref: $B" > "$C/git/HEAD" 2>/dev/null',
      'echo 1234567890123456789012345678901234567890 > "$C/git/$B"',
    ].join('\n')
    const result = await run(repo, script)
    const record = json<Record>(result)
    // Nothing of the agent's config ran on the host (on main, its sshCommand ran at the host's rev-parse).
    expect(existsSync(pwned)).toBe(false)
    // The folder is a mount point inside: it cannot be renamed aside.
    expect(readFileSync(join(record.worktree_dir, 'moved.txt'), 'utf8')).toBe('refused\n')
    // The branch the agent forged names no commit it made: nothing comes back, and the run says so.
    expect(record.container?.collected).toMatchObject({ kind: 'failed' })
    expect(record.container?.collected?.reason).toContain('not a commit it made')
    expect(record).toMatchObject({ status: 'FAILED', stop_reason: 'collect-failed', exit_code: 1 })
    expect(result.exitCode).toBe(1)
    expect(repo.git('rev-parse', record.git_branch)).toBe(repo.git('rev-parse', 'main'))
    const show = await cli(['session', 'show', record.id], { cwd: repo.dir, env: repo.env })
    expect(show.stdout).toMatch(/Work collected: +FAILED: .*not a commit it made/)
    expect(existsSync(pwned)).toBe(false)
  })

  test('a nested repository committed inside, with its own clean filter: it never runs on the host (run end, checkpoint, diff, merge, cleanup)', async () => {
    const repo = containerRepo()
    const pwned = join(tmpDir(), 'pwned')
    const script = nestedRepoWithFilter(pwned)
    const result = await run(repo, script)
    expect(result.exitCode, result.stderr).toBe(0)
    const record = json<Record>(result)
    expect(record.container?.collected).toMatchObject({ kind: 'fast-forward', commits: 1 })
    expect(existsSync(pwned)).toBe(false)
    for (const args of [
      ['session', 'checkpoint', record.id],
      ['session', 'diff', record.id, '--stat'],
      ['session', 'merge', record.id],
      ['session', 'cleanup', '--older-than', '0'],
    ]) {
      const step = await cli(args, { cwd: repo.dir, env: repo.env })
      expect(step.exitCode, `${args.join(' ')}: ${step.stderr}`).toBe(0)
      expect(existsSync(pwned), args.join(' ')).toBe(false)
    }
    expect(repo.git('ls-tree', 'main', 'vendor/lib')).toMatch(/^160000 commit /)
  })

  test('its branch in the private clone replaced by a FIFO: refused at once, the run ends and says so', async () => {
    const repo = containerRepo()
    const script = [
      'git commit -q --allow-empty -m "agent commit"',
      `B=${CLONE}/git/refs/heads/harness/$HARNESS_SESSION_ID`,
      'rm -f "$B" && ./tools/mkfifo "$B"',
    ].join('\n')
    const result = await run(repo, script)
    expect(result.exitCode).toBe(1)
    const record = json<Record>(result)
    expect(record).toMatchObject({ status: 'FAILED', stop_reason: 'collect-failed' })
    expect(record.container?.collected?.reason).toMatch(/is a FIFO/)
    expect(sessionContainers(record.id)).toEqual([])
  })

  test("--no-worktree: the checkout's .git and harness's files are read-only inside; the folder is the agent's", async () => {
    const repo = containerRepo()
    const pwned = join(tmpDir(), 'pwned')
    const before = {
      main: repo.git('rev-parse', 'refs/heads/main'),
      config: readFileSync(join(repo.dir, '.git', 'config'), 'utf8'),
      hooks: readdirSync(join(repo.dir, '.git', 'hooks')).sort(),
    }
    const script = [
      `printf '#!/bin/sh\\necho hook >> ${pwned}\\n' > .git/hooks/post-commit; chmod +x .git/hooks/post-commit`,
      `git config core.fsmonitor "sh -c 'echo fsmonitor >> ${pwned}'"`,
      'git update-ref refs/heads/main HEAD~0 2>/dev/null; echo evil > .git/refs/heads/evil',
      'echo "{}" > .harness/sessions/evil.json',
      'echo mine > agent-wrote.txt',
    ].join('\n')
    const result = await run(repo, script, ['--no-worktree'])
    expect(result.exitCode, result.stderr).toBe(0)
    expect(readFileSync(join(repo.dir, 'agent-wrote.txt'), 'utf8')).toBe('mine\n')
    expect(repo.git('rev-parse', 'refs/heads/main')).toBe(before.main)
    expect(readFileSync(join(repo.dir, '.git', 'config'), 'utf8')).toBe(before.config)
    expect(readdirSync(join(repo.dir, '.git', 'hooks')).sort()).toEqual(before.hooks)
    expect(existsSync(join(repo.dir, '.git', 'refs', 'heads', 'evil'))).toBe(false)
    expect(existsSync(join(repo.dir, '.harness', 'sessions', 'evil.json'))).toBe(false)
    repo.git('commit', '-q', '--allow-empty', '-m', 'the user commits afterwards')
    expect(existsSync(pwned)).toBe(false)
  })

  test('from inside, every mount is as writable as the table says, and none can be renamed: a worktree session and a --no-worktree one', async () => {
    const repo = containerRepo()
    const H = join(repo.dir, '.harness')
    const ID = '__ID__'
    const agentDir = join(H, 'agents', ID)
    const clone = join(agentDir, 'container')
    const tables: [string[], ReturnType<typeof containerMounts>][] = [
      [
        [],
        containerMounts({
          folder: join(H, 'worktrees', ID),
          harnessDir: H,
          agentDir,
          worktree: {
            commonDir: join(repo.dir, '.git'),
            cloneFolder: clone,
            gitDir: join(clone, 'git'),
            pointerFile: join(clone, 'dot-git'),
          },
          checkout: null,
        }),
      ],
      [
        ['--no-worktree'],
        containerMounts({
          folder: repo.dir,
          harnessDir: H,
          agentDir,
          worktree: null,
          checkout: { dotGit: join(repo.dir, '.git'), commonDir: join(repo.dir, '.git') },
        }),
      ],
    ]
    // For each path: can a file be made in it (a folder) or appended to (a file)? Can it be renamed aside?
    const probe = [
      'report="$HARNESS_DIR/agents/$HARNESS_SESSION_ID/report.txt"',
      'for p in "$@"; do',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's own substitution, in the probe's script
      '  p="${p//__ID__/$HARNESS_SESSION_ID}"',
      '  if [ -d "$p" ]; then',
      '    if touch "$p/.probe" 2>/dev/null; then rm -f "$p/.probe"; w=rw; else w=ro; fi',
      '  elif ( : >> "$p" ) 2>/dev/null; then w=rw; else w=ro; fi',
      '  if mv "$p" "$p.aside" 2>/dev/null; then mv "$p.aside" "$p"; r=renamed; else r=fixed; fi',
      '  echo "$w $r $p" >> "$report"',
      'done',
    ].join('\n')
    for (const [extra, table] of tables) {
      const paths = table.map((mount) => mount.path)
      const result = await cli(
        ['run', '--json', ...extra, '-a', 'exec', '--', 'bash', '-c', probe, 'probe', ...paths],
        { cwd: repo.dir, env: repo.env },
      )
      expect(result.exitCode, result.stderr).toBe(0)
      const { id } = json<Record>(result)
      const report = readFileSync(join(H, 'agents', id, 'report.txt'), 'utf8')
        .trim()
        .split('\n')
      expect(report).toEqual(table.map((mount) => `${mount.mode} fixed ${mount.path.replace(ID, id)}`))
    }
  })

  test('a second run with the same --session-id, refused while the first is being set up, removes nothing of it', async () => {
    const repo = containerRepo()
    // A podman that holds the first run's `create` until told: the first run is then mid-set-up, its worktree
    // and private clone made, its record not yet written.
    const bin = join(repo.home, 'bin-held')
    mkdirSync(bin)
    const real = execFileSync('sh', ['-c', 'command -v podman'], { encoding: 'utf8' }).trim()
    const hold = join(tmpDir(), 'hold')
    writeFileSync(
      join(bin, 'podman'),
      `#!/bin/sh\nif [ "$1" = create ] && [ -n "$HOLD" ]; then : > "$HOLD.reached"; while [ ! -f "$HOLD" ]; do sleep 0.1; done; fi\nexec ${real} "$@"\n`,
    )
    chmodSync(join(bin, 'podman'), 0o755)
    const env = { ...repo.env, PATH: `${bin}:${repo.env.PATH}` }
    // Unique on this machine: a container's name is harness-<id>-<run> in the engine, which every project and
    // every test run on the machine share (three CI runs at once met on a fixed id here).
    const id = `same-${process.pid}`
    const script = 'echo first > first.txt && git add first.txt && git commit -q -m "first run"'
    const first = cli(['run', '--json', '--session-id', id, '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: { ...env, HOLD: hold },
      process: true,
    })
    await waitFor('the first run to reach podman create', () => existsSync(`${hold}.reached`))
    const agentDir = join(repo.dir, '.harness', 'agents', id)
    expect(existsSync(join(agentDir, 'container', 'git', 'HEAD'))).toBe(true)
    const second = await cli(['run', '--session-id', id, '-a', 'exec', '--', 'true'], {
      cwd: repo.dir,
      env,
    })
    expect(second.exitCode).toBe(4)
    expect(second.stderr).toContain(`session "${id}" is being set up by another command`)
    expect(existsSync(join(agentDir, 'container', 'git', 'HEAD'))).toBe(true)
    writeFileSync(hold, '')
    const done = await first
    expect(done.exitCode, done.stderr).toBe(0)
    const record = json<Record>(done)
    expect(record.status).toBe('COMPLETED')
    expect(repo.git('log', '-1', '--format=%s', record.git_branch)).toBe('first run')
  })

  test('an engine that does not answer: list, show and path still answer from the record, with a warning', async () => {
    const repo = containerRepo()
    const script = 'echo started > started.txt; while [ ! -f go ]; do sleep 0.1; done'
    const child = spawn(HARNESS_BIN, ['run', '-a', 'exec', '--', 'sh', '-c', script], {
      cwd: repo.dir,
      env: repo.env,
      stdio: 'ignore',
    })
    let id = ''
    await waitFor('the agent to start', () => {
      const worktrees = join(repo.dir, '.harness', 'worktrees')
      const [found] = existsSync(worktrees) ? readdirSync(worktrees) : []
      if (!found || !existsSync(join(worktrees, found, 'started.txt'))) return false
      id = found
      return existsSync(join(repo.dir, '.harness', 'sessions', `${id}.json`))
    })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    child.kill('SIGKILL')
    await exited
    // Its supervisor gone, the container running: reading commands ask the engine, which now hangs.
    const bin = join(repo.home, 'bin-hung')
    mkdirSync(bin)
    writeFileSync(join(bin, 'podman'), '#!/bin/sh\nsleep 100000\n')
    chmodSync(join(bin, 'podman'), 0o755)
    const hung = { ...repo.env, PATH: `${bin}:${repo.env.PATH}` }
    for (const args of [
      ['session', 'list'],
      ['session', 'show', id, '--json'],
      ['session', 'path', id],
    ]) {
      const read = await cli(args, { cwd: repo.dir, env: hung, process: true })
      expect(read.exitCode, `${args.join(' ')}: ${read.stderr}`).toBe(0)
      expect(read.stderr).toContain('podman did not answer within 20 s')
      if (args[1] === 'show') expect(json<{ liveness: string }>(read).liveness).toBe('unverified')
      if (args[1] === 'path') expect(read.stdout.trim()).toBe(readRecord<Record>(repo.dir, id).worktree_dir)
    }
    // With the engine back, the session ends as it would have.
    writeFileSync(join(readRecord<Record>(repo.dir, id).worktree_dir, 'go'), '')
    const wait = await cli(['session', 'wait', id], { cwd: repo.dir, env: repo.env })
    expect(wait.exitCode).toBe(0)
    // wait reads (SPEC §14 "The seam"); collect settles it and removes the container.
    const collect = await cli(['session', 'collect', id], { cwd: repo.dir, env: repo.env })
    expect(collect.exitCode, collect.stderr).toBe(0)
    expect(sessionContainers(id)).toEqual([])
  })
})

describe.skipIf(!usable.engine || !canMount)(
  "a full disk while a container run's commits come back (tmpfs, as root)",
  () => {
    unmountAfterAll()

    test('the run is FAILED (collect-failed, exit 1), not "COMPLETED, exit 0"; the commits stay in the clone and the next resume brings them back first', async () => {
      const { mnt } = mountTmpfs('16m')
      const made = tmpGitRepo()
      const dir = join(mnt, 'repo')
      cpSync(made.dir, dir, { recursive: true })
      const repo = containerRepo({
        ...made,
        dir,
        git: (...args: string[]) =>
          execFileSync('git', args, { cwd: dir, env: made.env, encoding: 'utf8' }).trim(),
      })
      // The first run commits 2 MB that do not compress, then fills the disk and exits 0; a resume does nothing.
      const script = [
        'if [ -f "$HOME/ran" ]; then exit 0; fi',
        ': > "$HOME/ran"',
        "node -e \"require('fs').writeFileSync('big.bin', require('crypto').randomBytes(2 << 20))\"",
        'git add big.bin && git commit -q -m "big work"',
        "node -e \"const fs=require('fs');const fd=fs.openSync(process.env.HOME+'/filler','w');const b=Buffer.alloc(65536);try{for(;;)fs.writeSync(fd,b)}catch(e){}\"",
      ].join('\n')
      const result = await run(repo, script)
      expect(result.exitCode).toBe(1)
      const record = json<Record>(result)
      expect(record).toMatchObject({ status: 'FAILED', stop_reason: 'collect-failed', exit_code: 1 })
      expect(record.container?.collected?.kind).toBe('failed')
      expect(record.container?.collected?.reason).toMatch(/disk is full|No space left/)
      expect(repo.git('log', '-1', '--format=%s', record.git_branch)).toBe('tools')
      // Space again: the resume brings the commit back before it makes the clone afresh.
      rmSync(join(repo.dir, '.harness', 'agents', record.id, 'home', 'filler'))
      const resume = await cli(['session', 'resume', record.id, '--json'], { cwd: repo.dir, env: repo.env })
      expect(resume.exitCode, resume.stderr).toBe(0)
      expect(json<Record>(resume).status).toBe('COMPLETED')
      expect(repo.git('log', '-1', '--format=%s', record.git_branch)).toBe('big work')
      expect(statSync(join(record.worktree_dir, 'big.bin')).size).toBe(2 << 20)
    })
  },
)
