import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import { jobScript } from '../../src/sessions/backends/slurm/job-script.js'
import { makeRunDir, openSpool, readRunReport, stageRun } from '../../src/sessions/backends/slurm/spool.js'
import { exitOf } from '../helpers/processes.js'
import { readAgentTar, readOutBundle, writeAgent, writeRunInputs } from '../helpers/slurm-run.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { waitFor } from '../helpers/tmux.js'

/**
 * harness's job script (docs/backends.md, "The job script"), run by bash on this machine as slurmstepd would
 * run it on a node, with signals sent as Slurm sends them (TERM or USR1 to the script alone). What needs the
 * cluster itself (a node, its cgroup, scancel) is in slurm.test.ts; here is the script's own logic.
 */

interface LocalJob {
  runDir: string
  branch: string
  base: string
  scratch: string
  child: ChildProcess
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

function startJob(
  repo: TmpRepo,
  agentBody: string,
  options: {
    id?: string
    argv?: string[]
    uncommitted?: Record<string, string>
    agentFiles?: Record<string, string>
    workRel?: string
    /** Runs after the inputs are written, before the script starts. */
    before?: (runDir: string) => void
  } = {},
): LocalJob {
  const id = options.id ?? `s${Math.random().toString(36).slice(2, 8)}`
  started.add(id)
  const spool = openSpool(tmpDir(), repo.dir)
  const runDir = makeRunDir(spool, id, 1)
  const { branch, base } = writeRunInputs(repo, id, runDir, options)
  const bin = tmpDir()
  writeAgent(bin, 'agent', agentBody)
  const scratch = tmpDir()
  const script = jobScript({
    session: id,
    run: 1,
    runDir,
    scratch,
    branch,
    workRel: options.workRel ?? '',
    worktreeState: options.uncommitted !== undefined,
    agentFiles: options.agentFiles !== undefined,
    path: `${bin}:/usr/bin:/bin`,
    stepSeconds: 60,
  })
  stageRun(runDir, { argv: options.argv ?? ['agent'], env: { HARNESS_RUN: '1' }, script })
  options.before?.(runDir)
  // As slurmstepd does: stdout to the job's --output, stderr to its --error, the script as a file.
  const child = spawn('bash', [join(runDir, 'job.sh')], {
    cwd: runDir,
    env: { PATH: '/usr/bin:/bin', TMPDIR: '/nonexistent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const log: Buffer[] = []
  const err: Buffer[] = []
  child.stdout?.on('data', (chunk: Buffer) => log.push(chunk))
  child.stderr?.on('data', (chunk: Buffer) => err.push(chunk))
  const done = exitOf(child).then((exit) => {
    writeFileSync(join(runDir, 'log'), Buffer.concat(log))
    writeFileSync(join(runDir, 'job.err'), Buffer.concat(err))
    return exit
  })
  return { runDir, branch, base, scratch, child, done }
}

/** The sessions this file started: whatever of theirs still runs after a test (one that failed) is killed. */
const started = new Set<string>()
afterEach(() => {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
      const id = environ.find((entry) => entry.startsWith('HARNESS_SESSION_ID='))?.slice(19)
      if (id && started.has(id)) process.kill(Number(pid), 'SIGKILL')
    } catch {}
  }
  started.clear()
})

const agentStarted = (job: LocalJob) =>
  waitFor(
    'the agent to start',
    () => existsSync(join(job.runDir, 'started')) && existsSync(join(job.scratch, 'ready')),
  )

describe("harness's job script, run by bash as a node would", () => {
  test('commits, uncommitted files and HOME come back; the exit code file is the truth; scratch is removed', async () => {
    const repo = tmpGitRepo()
    const job = startJob(
      repo,
      [
        'set -e',
        'echo "agent on $(hostname) in $PWD"',
        'echo committed > done.txt && git add done.txt && git -c user.name=A -c user.email=a@x commit -qm "agent work"',
        'echo pending > notes.txt',
        'echo "second turn" >> "$HOME/conversation"',
        'echo "HARNESS_RUN=$HARNESS_RUN HARNESS_SESSION_ID=$HARNESS_SESSION_ID" > "$HOME/env"',
        'exit 0',
      ].join('\n'),
      { agentFiles: { 'home/conversation': 'first turn\n' } },
    )
    expect(await job.done).toEqual({ code: 0, signal: null })
    const report = readRunReport(job.runDir)
    expect(report).toMatchObject({ exitCode: 0, endedBy: 'exit', setupError: null })
    expect(report.sent).toMatchObject({ commits: 'sent', agentFiles: true })
    expect(report.sent?.uncommitted).toMatch(/^[0-9a-f]{40}$/)
    // The bundle builds on the branch's start (the host has it): fetched into the repository, the work is there.
    const out = readOutBundle(job.runDir, repo)
    expect([...(out?.refs.keys() ?? [])].sort()).toEqual([
      `refs/harness/uncommitted`,
      `refs/heads/${job.branch}`,
    ])
    expect(out?.refs.get(`refs/harness/uncommitted`)).toBe(report.sent?.uncommitted)
    const tip = out?.refs.get(`refs/heads/${job.branch}`) ?? ''
    expect(repo.git('show', `${tip}:done.txt`)).toBe('committed')
    expect(repo.git('log', '-1', '--format=%s', tip)).toBe('agent work')
    expect(repo.git('rev-parse', `${tip}^`)).toBe(job.base)
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:notes.txt')).toBe('pending')
    expect(repo.git('rev-parse', 'refs/came-back/harness/uncommitted^')).toBe(tip)
    const agent = readAgentTar(job.runDir)
    expect(agent.get('home/conversation')).toBe('first turn\nsecond turn\n')
    expect(agent.get('home/env')).toBe(`HARNESS_RUN=1 HARNESS_SESSION_ID=${job.runDir.split('/').at(-2)}\n`)
    expect(readFileSync(join(job.runDir, 'log'), 'utf8')).toMatch(/^agent on .* in .*\/work$/m)
    expect(readdirSync(job.scratch)).toEqual([`harness-${process.getuid?.()}`])
    expect(readdirSync(join(job.scratch, `harness-${process.getuid?.()}`))).toEqual([])
  })

  test('an agent that exits 7 with nothing changed: 7 in the exit code file, no bundle', async () => {
    const repo = tmpGitRepo()
    const job = startJob(repo, 'exit 7')
    expect((await job.done).code).toBe(7)
    expect(readRunReport(job.runDir)).toMatchObject({
      exitCode: 7,
      endedBy: 'exit',
      sent: { commits: 'none', uncommitted: null, agentFiles: true },
    })
    expect(existsSync(join(job.runDir, 'out.bundle'))).toBe(false)
  })

  test('a prompt full of quotes, $(), backticks and newlines reaches the agent byte for byte, and runs nothing', async () => {
    const repo = tmpGitRepo()
    const marker = join(tmpDir(), 'pwned')
    const prompt = `it's "done" $(touch ${marker}) \`touch ${marker}\` \${HOME} ; touch ${marker}\nline two\n\ttab 'x'"y"\\`
    const job = startJob(repo, `printf '%s\\0' "$@" > "$HOME/argv"`, {
      argv: ['agent', '-p', prompt, '--', '-x'],
    })
    expect((await job.done).code).toBe(0)
    expect(readAgentTar(job.runDir).get('home/argv')).toBe(`-p\0${prompt}\0--\0-x\0`)
    expect(existsSync(marker)).toBe(false)
    expect(readFileSync(join(job.runDir, 'job.sh'), 'utf8')).not.toContain('line two')
  })

  test("the worktree's uncommitted files are restored as uncommitted, and the agent starts in its folder", async () => {
    const repo = tmpGitRepo()
    repo.write('pkg/api/main.txt', 'v1\n')
    repo.git('add', '.')
    repo.git('commit', '-qm', 'pkg')
    const job = startJob(repo, 'git status --porcelain > "$HOME/status"; pwd > "$HOME/pwd"', {
      uncommitted: { 'pkg/api/main.txt': 'v2\n', 'new.txt': 'new\n' },
      workRel: 'pkg/api',
    })
    expect((await job.done).code).toBe(0)
    const agent = readAgentTar(job.runDir)
    expect(agent.get('home/status')).toBe(' M pkg/api/main.txt\n?? new.txt\n')
    expect(agent.get('home/pwd')?.trim().endsWith('/work/pkg/api')).toBe(true)
  })

  test("harness's stop (USR1): TERM to the agent's group, its work still sent back, the end marked a stop", async () => {
    const repo = tmpGitRepo()
    const job = startJob(
      repo,
      [
        'trap \'echo got-term > "$HOME/term"; exit 143\' TERM',
        'echo half > half.txt',
        `touch ${'"$TMPDIR/../../../ready"'}`,
        'while :; do sleep 0.1; done',
      ].join('\n'),
    )
    await agentStarted(job)
    job.child.kill('SIGUSR1')
    expect((await job.done).code).toBe(143)
    expect(readRunReport(job.runDir)).toMatchObject({
      exitCode: 143,
      endedBy: 'stop',
      sent: { agentFiles: true },
    })
    expect(readAgentTar(job.runDir).get('home/term')).toBe('got-term\n')
    expect(readOutBundle(job.runDir, repo)?.refs.has('refs/harness/uncommitted')).toBe(true)
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:half.txt')).toBe('half')
  })

  test('TERM before the time limit: the end is marked a timeout, the work sent back', async () => {
    const repo = tmpGitRepo()
    const job = startJob(repo, `echo partial > partial.txt; touch "$TMPDIR/../../../ready"; exec sleep 600`)
    await agentStarted(job)
    job.child.kill('SIGTERM')
    expect((await job.done).code).toBe(143)
    expect(readRunReport(job.runDir)).toMatchObject({ exitCode: 143, endedBy: 'timeout' })
    expect(readOutBundle(job.runDir, repo)?.refs.has('refs/harness/uncommitted')).toBe(true)
    expect(repo.git('show', 'refs/came-back/harness/uncommitted:partial.txt')).toBe('partial')
  })

  test('an agent that ignores TERM, with children in its group: a second signal kills the whole group', async () => {
    const repo = tmpGitRepo()
    const job = startJob(
      repo,
      [
        'trap \'echo ignored >> "$HOME/term"\' TERM',
        '(trap "" TERM; sleep 600) & (trap "" TERM; sleep 600 & wait) &',
        'echo "$$ $(jobs -p | tr "\\n" " ")" > "$HOME/pids"',
        'touch "$TMPDIR/../../../ready"',
        'while :; do sleep 0.1; done',
      ].join('\n'),
    )
    await agentStarted(job)
    job.child.kill('SIGUSR1')
    // The agent got TERM and ignored it: the job goes on (the agent never ends by itself).
    await waitFor('the agent to ignore TERM', () =>
      existsSync(
        join(
          job.scratch,
          `harness-${process.getuid?.()}`,
          job.runDir.split('/').at(-2) ?? '',
          'agent',
          'home',
          'term',
        ),
      ),
    )
    expect(existsSync(join(job.runDir, 'exit-code'))).toBe(false)
    job.child.kill('SIGTERM')
    expect((await job.done).code).toBe(137)
    expect(readRunReport(job.runDir)).toMatchObject({ exitCode: 137, endedBy: 'stop' })
    const group = readAgentTar(job.runDir).get('home/pids')?.trim().split(/\s+/).map(Number) ?? []
    expect(group.length).toBeGreaterThan(1)
    for (const pid of group) {
      await waitFor(`process ${pid} to be gone`, () => {
        try {
          return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true
        } catch {
          return true
        }
      })
    }
  })

  test('no bundle to clone from: setup-error, no agent started, scratch removed', async () => {
    const repo = tmpGitRepo()
    const marker = join(tmpDir(), 'ran')
    const job = startJob(repo, `touch ${marker}`, { before: (runDir) => rmSync(join(runDir, 'in.bundle')) })
    expect((await job.done).code).toBe(1)
    expect(readRunReport(job.runDir)).toMatchObject({
      exitCode: null,
      started: null,
      setupError: expect.stringContaining('cannot clone harness/'),
      sent: null,
    })
    expect(existsSync(marker)).toBe(false)
    expect(readdirSync(join(job.scratch, `harness-${process.getuid?.()}`))).toEqual([])
  })
})
