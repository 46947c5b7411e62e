import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { cli, json } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import type { SessionJson } from '../helpers/sessions.js'
import { tmpGitRepo } from '../helpers/tmp.js'

interface CheckpointJson {
  n: number
  ref: string
  commit: string
  head: string
  trigger: string
  files_changed: number
  message: string
}

function userConfig(env: NodeJS.ProcessEnv, config: unknown): void {
  const dir = join(String(env.XDG_CONFIG_HOME), 'harness')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config))
}

// Writes file-<i>.txt every 300 ms until the record lists three checkpoints (no timing assumed), then idles for
// more than two intervals without changing anything.
const WRITER = [
  "const fs=require('fs')",
  "const rec=process.env.HARNESS_DIR+'/sessions/'+process.env.HARNESS_SESSION_ID+'.json'",
  "const taken=()=>{try{return (JSON.parse(fs.readFileSync(rec,'utf8')).checkpoints||[]).length}catch{return 0}}",
  'let i=0',
  "const t=setInterval(()=>{fs.writeFileSync('file-'+i+'.txt',String(i));i++;if(taken()>=3||i>=600){clearInterval(t);setTimeout(()=>{},2600)}},300)",
].join(';')

describe('automatic checkpoints', () => {
  test('interval checkpoints while an agent writes: consecutive, right files_changed, none without changes', async () => {
    const repo = tmpGitRepo()
    userConfig(repo.env, { checkpoint: { interval: '1s' } })
    const run = await cli(['run', '-a', 'exec', '--json', '--', process.execPath, '-e', WRITER], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const session = json<SessionJson & { checkpoints: CheckpointJson[] }>(run)
    const checkpoints = session.checkpoints
    expect(checkpoints.length).toBeGreaterThanOrEqual(3)
    expect(checkpoints.map((c) => c.n)).toEqual(checkpoints.map((_, i) => i))
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: repo.dir, env: repo.env, encoding: 'utf8' })
    let previous = git('rev-parse', `${checkpoints[0]?.commit}^1`).trim()
    for (const c of checkpoints) {
      expect(['interval', 'run-end']).toContain(c.trigger)
      expect(git('rev-parse', c.ref).trim()).toBe(c.commit)
      const changed = git('diff-tree', '-r', '--name-only', previous, c.commit)
        .trim()
        .split('\n')
        .filter(Boolean)
      // Each one differs from the one before (none is taken when nothing changed), by exactly what it says.
      expect(c.files_changed).toBeGreaterThan(0)
      expect(changed).toHaveLength(c.files_changed)
      previous = c.commit
    }
    // The last checkpoint holds the final state: every file the agent wrote.
    const last = checkpoints[checkpoints.length - 1]
    const inCheckpoint = git('ls-tree', '-r', '--name-only', String(last?.commit))
      .split('\n')
      .filter((f) => f.startsWith('file-'))
    const written = readdirSync(session.worktree_dir).filter((f) => f.startsWith('file-'))
    expect(inCheckpoint.sort()).toEqual(written.sort())
  })

  test('an interval longer than a timer holds (30d) takes no interval checkpoint, only the run-end one', async () => {
    const repo = tmpGitRepo()
    userConfig(repo.env, { checkpoint: { interval: '30d' } })
    // Changes the worktree 20 times, 100 ms apart: an interval that misfired would checkpoint each change.
    const writer =
      "const fs=require('fs');let i=0;const t=setInterval(()=>{fs.writeFileSync('f-'+i+'.txt',String(i));if(++i>=20)clearInterval(t)},100)"
    const run = await cli(['run', '-a', 'exec', '--json', '--', process.execPath, '-e', writer], {
      cwd: repo.dir,
      env: repo.env,
    })
    expect(run.exitCode, run.stderr).toBe(0)
    const session = json<SessionJson & { checkpoints: CheckpointJson[] }>(run)
    expect(session.checkpoints.map((c) => c.trigger)).toEqual(['run-end'])
  })

  test('a run that changed nothing gets no checkpoint; one that did gets a run-end checkpoint', async () => {
    const repo = tmpGitRepo()
    userConfig(repo.env, { checkpoint: { interval: '0' } })
    const idle = (await finishedSession(repo, 'true')) as SessionJson & { checkpoints: CheckpointJson[] }
    expect(idle.checkpoints).toEqual([])
    const busy = (await finishedSession(repo, 'echo hi > made.txt')) as SessionJson & {
      checkpoints: CheckpointJson[]
    }
    expect(busy.checkpoints).toMatchObject([{ n: 0, trigger: 'run-end', files_changed: 1 }])
  })
})

describe('session checkpoint / checkpoints / restore', () => {
  test('manual checkpoint, listing, restore and its undo through the CLI; restore of a RUNNING session is exit 4', async () => {
    const repo = tmpGitRepo()
    userConfig(repo.env, { checkpoint: { interval: '0' } })
    const opts = { cwd: repo.dir, env: repo.env }
    const session = await finishedSession(repo, 'echo one > one.txt')
    const wt = session.worktree_dir
    writeFileSync(join(wt, 'two.txt'), 'two\n')
    const taken = await cli(['session', 'checkpoint', session.id, '-m', 'two files', '--json'], opts)
    expect(taken.exitCode, taken.stderr).toBe(0)
    expect(json<{ checkpoint: CheckpointJson }>(taken).checkpoint).toMatchObject({
      n: 1,
      trigger: 'manual',
      message: 'two files',
      files_changed: 1,
    })
    const listed = await cli(['session', 'checkpoints', session.id], opts)
    expect(listed.exitCode).toBe(0)
    expect(listed.stdout).toMatch(/^N\s+TIME\s+TRIGGER\s+FILES/)
    expect(listed.stdout).toContain('two files')
    const show = await cli(['session', 'show', session.id], opts)
    expect(show.stdout).toMatch(/#1 [0-9a-f]{12} .* manual\s+1 file\s+two files/)

    const restored = await cli(['session', 'restore', session.id, '0', '--json'], opts)
    expect(restored.exitCode, restored.stderr).toBe(0)
    expect(json<{ before: CheckpointJson }>(restored).before).toMatchObject({
      n: 2,
      trigger: 'before-restore',
    })
    const status = () =>
      execFileSync('git', ['status', '--porcelain'], { cwd: wt, env: repo.env, encoding: 'utf8' })
    expect(status()).toBe('?? one.txt\n')
    const undo = await cli(['session', 'restore', session.id, '2'], opts)
    expect(undo.exitCode, undo.stderr).toBe(0)
    expect(undo.stdout).toContain('undo with: harness session restore')
    expect(status()).toBe('?? one.txt\n?? two.txt\n')

    const running = await cli(['run', '-a', 'exec', '-d', '--json', '--', 'sleep', '30'], opts)
    const live = json<SessionJson>(running)
    await cli(['session', 'checkpoint', live.id], opts)
    const refused = await cli(['session', 'restore', live.id, '0'], opts)
    expect(refused.exitCode).toBe(4)
    expect(refused.stderr).toContain('running')
    // So is merging it (the same live session, to keep the suite lean).
    const merge = await cli(['session', 'merge', live.id, '--json'], opts)
    expect(merge.exitCode).toBe(4)
    expect(JSON.parse(merge.stderr).error.code).toBe('SESSION_RUNNING')
    await cli(['session', 'kill', live.id], opts)
    await cli(['session', 'wait', live.id, '--timeout', '60s'], opts)
  })
})

describe('removal', () => {
  test("delete removes a session's checkpoint refs; the --force snapshots stay", async () => {
    const repo = tmpGitRepo()
    userConfig(repo.env, { checkpoint: { interval: '0' } })
    const opts = { cwd: repo.dir, env: repo.env }
    const session = await finishedSession(repo, 'echo one > one.txt')
    const refs = () => repo.git('for-each-ref', '--format=%(refname)', `refs/harness/${session.id}/`)
    expect(refs()).toBe(`refs/harness/${session.id}/checkpoints/0`)
    const removed = await cli(['session', 'delete', session.id, '--force'], opts)
    expect(removed.exitCode, removed.stderr).toBe(0)
    const left = refs().split('\n')
    expect(left.some((ref) => ref.includes('/checkpoints/'))).toBe(false)
    expect(left).toContain(`refs/harness/${session.id}/worktree`)
  })
})
