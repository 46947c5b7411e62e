// Checkpoint cost: `harness session checkpoint <id>` on a worktree of 5,000 files (100 of them edited, 50
// untracked), against the least git work for the same tree: a copy of the index, `git add -A` and
// `git write-tree` on it (what any whole-worktree snapshot needs).
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { compare } from './lib.mjs'

const FILES = 5000

/** @param {{ harnessBin: string, runs?: number }} options */
export async function benchCheckpoint({ harnessBin, runs = 7 }) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'harness-bench-checkpoint-')))
  try {
    const home = join(root, 'home')
    mkdirSync(home)
    writeFileSync(join(home, '.gitconfig'), '[init]\n\tdefaultBranch = main\n')
    const env = { ...process.env, NO_COLOR: '1', HOME: home, XDG_CONFIG_HOME: join(home, '.config') }
    env.XDG_STATE_HOME = join(home, '.local', 'state')
    env.GIT_CONFIG_GLOBAL = join(home, '.gitconfig')
    env.GIT_CONFIG_NOSYSTEM = '1'
    Object.assign(env, {
      GIT_AUTHOR_NAME: 'b',
      GIT_AUTHOR_EMAIL: 'b@b',
      GIT_COMMITTER_NAME: 'b',
      GIT_COMMITTER_EMAIL: 'b@b',
    })
    for (const key of Object.keys(env)) if (key.startsWith('HARNESS_')) delete env[key]
    const repo = join(root, 'repo')
    mkdirSync(repo)
    const git = (args, cwd = repo) => execFileSync('git', args, { cwd, env, encoding: 'utf8' })
    git(['init', '-q'])
    for (let i = 0; i < FILES; i++) {
      const dir = join(repo, `d${i % 50}`)
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`.repeat(20))
    }
    git(['add', '-A'])
    git(['commit', '-qm', 'files'])
    // A session with checkpoints off, then work in its worktree.
    mkdirSync(join(env.XDG_CONFIG_HOME, 'harness'), { recursive: true })
    writeFileSync(join(env.XDG_CONFIG_HOME, 'harness', 'config.json'), '{"checkpoint":{"interval":"0"}}')
    const session = JSON.parse(
      execFileSync(harnessBin, ['run', '-a', 'exec', '--json', '--', 'true'], {
        cwd: repo,
        env,
        encoding: 'utf8',
      }),
    )
    const wt = session.worktree_dir
    for (let i = 0; i < 100; i++) writeFileSync(join(wt, `d${i % 50}`, `f${i}.txt`), `edited ${i}\n`)
    for (let i = 0; i < 50; i++) writeFileSync(join(wt, `new-${i}.txt`), `new ${i}\n`)
    const floorScript =
      't=$(mktemp) && cp "$(git rev-parse --path-format=absolute --git-path index)" "$t" && ' +
      'GIT_INDEX_FILE="$t" git add -A && GIT_INDEX_FILE="$t" git write-tree >/dev/null; rm -f "$t"'
    const subject = {
      command: harnessBin,
      args: ['session', 'checkpoint', session.id, '--json'],
      cwd: repo,
      env,
    }
    const gitOnly = await compare({
      label: `checkpoint, ${FILES.toLocaleString('en')} files`,
      subject,
      floor: {
        label: 'temp index add -A + write-tree',
        command: 'sh',
        args: ['-c', floorScript],
        cwd: wt,
        env,
      },
      runs,
      aim: 1.5,
    })
    // Any CLI written for node pays node's start; this floor adds it, so the ratio shows harness's own share.
    const withNode = await compare({
      label: `checkpoint, ${FILES.toLocaleString('en')} files (vs node start + git)`,
      subject,
      floor: {
        label: 'node -e 0, then the same git work',
        command: 'sh',
        args: ['-c', `"${process.execPath}" -e 0 && ${floorScript}`],
        cwd: wt,
        env,
      },
      runs,
      aim: 1.5,
    })
    return [gitOnly, withNode]
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
