// Cleanup at scale: `harness session cleanup --older-than 0 --json` over 1,000 finished sessions with
// worktrees, against the least work that gives the same result: remove the folders, one `git worktree prune`,
// one `git update-ref --stdin` transaction deleting the branches.
// Sessions are made with plain git and records written directly, in the format `harness run --json` prints.
import { execFile, spawn } from 'node:child_process'
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { isolatedEnvAt } from './isolated-env.mjs'
import { sealerFor } from './seal.mjs'

const execFileAsync = promisify(execFile)

/**
 * @param {{ harnessBin: string, log?: (line: string) => void, count?: number }} options
 * @returns {Promise<{ count: number, harnessMs: number, gitMs: number, ratio: number, setupMs: number }>}
 */
export async function benchCleanup({ harnessBin, log = console.log, count = 1000 }) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'harness-bench-cleanup-')))
  const started = Date.now()
  try {
    const home = join(root, 'home')
    mkdirSync(home)
    writeFileSync(join(home, '.gitconfig'), '[init]\n\tdefaultBranch = main\n')
    const env = isolatedEnvAt(home, 'Bench')
    const repo = join(root, 'repo')
    mkdirSync(repo)
    const git = (args, cwd = repo, input) => {
      const running = execFileAsync('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })
      if (input !== undefined) running.child.stdin.end(input)
      return running
    }
    await git(['init', '-q'])
    writeFileSync(join(repo, 'README.md'), '# bench\n')
    mkdirSync(join(repo, 'src'))
    writeFileSync(join(repo, 'src', 'index.js'), 'export const answer = 42\n')
    await git(['add', '-A'])
    await git(['commit', '-qm', 'initial'])
    const base = (await git(['rev-parse', 'HEAD'])).stdout.trim()

    log(`cleanup: creating ${count} finished sessions with worktrees…`)
    const ids = sessionIds(count, 0)
    await makeSessions({ repo, base, ids, git, seal: sealerFor(join(home, '.local', 'state')) })
    const setupMs = Date.now() - started

    const t0 = performance.now()
    const result = await runHarness(
      harnessBin,
      ['session', 'cleanup', '--older-than', '0', '--json'],
      repo,
      env,
    )
    const harnessMs = performance.now() - t0
    if (result.code !== 0) throw new Error(`harness cleanup failed (${result.code}): ${result.stderr}`)
    const report = JSON.parse(result.stdout)
    if (report.removed.length !== count || report.kept.length !== 0) {
      throw new Error(
        `harness cleanup removed ${report.removed.length} and kept ${report.kept.length} of ${count}`,
      )
    }
    // The same result as the floor's, checked the same way: no branch, no registration left.
    const leftByHarness = (await git(['for-each-ref', 'refs/heads/harness/'])).stdout.trim()
    const listedAfter = (await git(['worktree', 'list', '--porcelain'])).stdout.match(/^worktree /gm)?.length
    if (leftByHarness || listedAfter !== 1) {
      throw new Error(`harness cleanup left branches or worktrees: ${listedAfter} listed`)
    }

    log(`cleanup: creating ${count} worktrees again for the least-work baseline…`)
    const again = sessionIds(count, count)
    await makeWorktrees({ repo, ids: again, git })
    // The least work with the same result: the folders removed directly, one `git worktree prune` for their
    // registrations, one `git update-ref --stdin` transaction deleting every branch.
    const folders = again.map((id) => `.harness/worktrees/${id}`)
    const deletions = again.map((id) => `delete refs/heads/harness/${id}\n`).join('')
    const t1 = performance.now()
    await execFileAsync('rm', ['-rf', '--', ...folders], { cwd: repo, env })
    await git(['worktree', 'prune'])
    await git(['update-ref', '--stdin'], repo, deletions)
    const gitMs = performance.now() - t1
    const left = (await git(['for-each-ref', 'refs/heads/harness/'])).stdout.trim()
    const listed = (await git(['worktree', 'list', '--porcelain'])).stdout.match(/^worktree /gm)?.length
    if (left || listed !== 1)
      throw new Error(`the baseline left branches or worktrees: ${listed} listed; ${left.slice(0, 300)}`)

    const ratio = harnessMs / gitMs
    log(
      `cleanup: ${count} sessions: harness session cleanup ${(harnessMs / 1000).toFixed(2)} s ` +
        `(${(harnessMs / count).toFixed(1)} ms/session); rm + one worktree prune + one update-ref alone ` +
        `${(gitMs / 1000).toFixed(2)} s (${(gitMs / count).toFixed(1)} ms/session); ratio ${ratio.toFixed(2)}x`,
    )
    return { count, harnessMs, gitMs, ratio, setupMs }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

function sessionIds(count, offset) {
  return Array.from({ length: count }, (_, i) => (0x10000000 + offset + i).toString(16))
}

/**
 * Makes `ids.length` worktrees on new branches harness/<id>. `git worktree add` reads every other worktree, so
 * 1,000 of them cost ~40 s on a 2-core machine; instead one is made with git and its layout (what `git
 * worktree add` writes: the admin folder, the `.git` file, the index, the files) is copied for the others,
 * all branches created in one `update-ref` transaction, and each index refreshed. Checked with `git worktree
 * list` and `git status`.
 */
async function makeWorktrees({ repo, ids, git }) {
  const worktrees = join(repo, '.harness', 'worktrees')
  mkdirSync(worktrees, { recursive: true, mode: 0o700 })
  const head = (await git(['rev-parse', 'HEAD'])).stdout.trim()
  const common = join(repo, '.git')
  const template = join(worktrees, 'template')
  await git(['worktree', 'add', '-q', '--detach', template, head])
  const templateAdmin = readFileSync(join(template, '.git'), 'utf8')
    .replace(/^gitdir: /, '')
    .trim()
  await git(
    ['update-ref', '--stdin'],
    repo,
    ids.map((id) => `create refs/heads/harness/${id} ${head}\n`).join(''),
  )
  for (const id of ids) {
    const dir = join(worktrees, id)
    const admin = join(common, 'worktrees', id)
    mkdirSync(admin, { recursive: true })
    writeFileSync(join(admin, 'HEAD'), `ref: refs/heads/harness/${id}\n`)
    writeFileSync(join(admin, 'commondir'), '../..\n')
    writeFileSync(join(admin, 'gitdir'), `${join(dir, '.git')}\n`)
    copyFileSync(join(templateAdmin, 'index'), join(admin, 'index'))
    cpSync(template, dir, { recursive: true, filter: (path) => path !== join(template, '.git') })
    writeFileSync(join(dir, '.git'), `gitdir: ${admin}\n`)
  }
  await git(['worktree', 'remove', template])
  // The copies have new inodes and times, so their copied indexes no longer describe them. What `git worktree
  // add` leaves, once any later `git status` has refreshed it, is an index whose stat data are its own
  // files' and which is newer than them: refreshed here a second after the copies (chunked through
  // `git for-each-repo`), so that no entry is racily clean.
  await new Promise((done) => setTimeout(done, 1100))
  for (let start = 0; start < ids.length; start += 100) {
    const chunk = ids
      .slice(start, start + 100)
      .flatMap((id) => ['-c', `bench.worktree=${join(worktrees, id)}`])
    await git([...chunk, 'for-each-repo', '--config=bench.worktree', '--', 'update-index', '-q', '--refresh'])
  }
  const listed = (await git(['worktree', 'list', '--porcelain'])).stdout.match(/^worktree /gm)?.length ?? 0
  const sample = ids[ids.length - 1]
  const status = sample ? (await git(['status', '--porcelain'], join(worktrees, sample))).stdout : ''
  const branch = sample
    ? (await git(['branch', '--show-current'], join(worktrees, sample))).stdout.trim()
    : ''
  if (listed < ids.length + 1 || status !== '' || (sample && branch !== `harness/${sample}`)) {
    throw new Error(`made worktrees are not valid: ${listed} listed, status "${status}", branch "${branch}"`)
  }
}

async function makeSessions({ repo, base, ids, git, seal }) {
  const harness = join(repo, '.harness')
  mkdirSync(join(harness, 'sessions'), { recursive: true, mode: 0o700 })
  mkdirSync(join(harness, 'logs'), { recursive: true, mode: 0o700 })
  writeFileSync(join(harness, '.gitignore'), '*\n')
  await makeWorktrees({ repo, ids, git })
  const day = 86_400_000
  const created = new Date(Date.now() - 2 * day).toISOString()
  const ended = new Date(Date.now() - 2 * day + 60_000).toISOString()
  for (const id of ids) {
    const record = {
      id,
      provider: 'exec',
      permission: 'supervised',
      status: 'COMPLETED',
      worktree_dir: join(harness, 'worktrees', id),
      is_worktree: true,
      git_branch: `harness/${id}`,
      branch_created: true,
      base_dir: repo,
      pid: 4242,
      exit_code: 0,
      prompt: null,
      created_at: created,
      updated_at: ended,
      completed_at: ended,
      schema_version: 1,
      rev: 3,
      model: null,
      task_hash: null,
      base_commit: base,
      agent_session_id: null,
      stop_reason: 'exited',
      stop_request: null,
      runs: [
        {
          n: 1,
          kind: 'start',
          pid: 4242,
          pid_start_time: '100',
          supervisor_pid: 4241,
          supervisor_start_time: '99',
          args: ['true'],
          started_at: created,
          ended_at: ended,
          exit_code: 0,
          signal: null,
          hostname: 'bench',
          boot_id: null,
          pid_namespace: null,
          detached: false,
        },
      ],
      checkpoints: [],
      files_modified: [],
      metadata: { os: 'bench', hostname: 'bench', harness_version: '0.1.0', node_version: process.version },
      base_ref: 'main',
      start_subdir: null,
      extra_args: ['true'],
    }
    writeFileSync(
      join(harness, 'sessions', `${id}.json`),
      `${JSON.stringify(seal(record, repo), null, 2)}\n`,
      {
        mode: 0o600,
      },
    )
    writeFileSync(join(harness, 'logs', `${id}.log`), 'agent output\n', { mode: 0o600 })
  }
}

function runHarness(bin, args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

// `node bench/cleanup.mjs [count]` runs it alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  const harnessBin = new URL('../bin/harness', import.meta.url).pathname
  await benchCleanup({ harnessBin, count: Number(process.argv[2] ?? 1000) })
}
