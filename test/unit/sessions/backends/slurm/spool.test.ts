import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  makeRunDir,
  openSpool,
  readRunReport,
  removeSessionSpool,
  stageRun,
} from '../../../../../src/sessions/backends/slurm/spool.js'
import { tmpDir } from '../../../../helpers/tmp.js'

const uid = process.getuid?.() ?? 0
const mode = (path: string) => statSync(path).mode & 0o777

describe('the spool', () => {
  test('unset: a usage error naming slurm.spool', () => {
    expect(() => openSpool(undefined, null)).toThrow(
      expect.objectContaining({
        exitCode: 2,
        code: 'SLURM_SPOOL_MISSING',
        message: expect.stringContaining('slurm.spool'),
      }),
    )
  })

  test('relative, missing or a file: refused', () => {
    const dir = tmpDir()
    writeFileSync(join(dir, 'file'), '')
    for (const bad of ['spool', join(dir, 'missing'), join(dir, 'file')]) {
      expect(() => openSpool(bad, null)).toThrow(
        expect.objectContaining({ exitCode: 2, code: 'SLURM_SPOOL_INVALID' }),
      )
    }
  })

  test('inside the repository (itself, a folder of it, or through a link to one): refused', () => {
    const repo = tmpDir()
    mkdirSync(join(repo, 'spool'))
    const elsewhere = tmpDir()
    symlinkSync(join(repo, 'spool'), join(elsewhere, 'link'))
    for (const spool of [repo, join(repo, 'spool'), join(elsewhere, 'link')]) {
      expect(() => openSpool(spool, repo)).toThrow(
        expect.objectContaining({ exitCode: 2, code: 'SLURM_SPOOL_IN_REPOSITORY' }),
      )
    }
  })

  test('the user folder is 0700, and an open one is closed again', () => {
    const root = tmpDir()
    chmodSync(root, 0o1777)
    const spool = openSpool(root, null)
    expect(spool.userDir).toBe(join(root, `harness-${uid}`))
    expect(mode(spool.userDir)).toBe(0o700)
    chmodSync(spool.userDir, 0o755)
    openSpool(root, null)
    expect(mode(spool.userDir)).toBe(0o700)
  })

  test('a link planted as the user folder is refused (exit 4)', () => {
    const root = tmpDir()
    symlinkSync(tmpDir(), join(root, `harness-${uid}`))
    expect(() => openSpool(root, null)).toThrow(expect.objectContaining({ exitCode: 4 }))
  })

  test('run folders: 0700, made empty; inputs 0600, argv and env NUL-separated; removal takes the session', () => {
    const spool = openSpool(tmpDir(), null)
    const runDir = makeRunDir(spool, 'sess1', 1)
    expect(runDir).toBe(join(spool.userDir, 'sess1', 'run-1'))
    writeFileSync(join(runDir, 'leftover'), '')
    expect(makeRunDir(spool, 'sess1', 1)).toBe(runDir)
    expect(() => readFileSync(join(runDir, 'leftover'))).toThrow()
    writeFileSync(join(runDir, 'in.bundle'), 'bundle', { mode: 0o644 })
    const prompt = `it's "quoted" $(touch /tmp/x) \`y\`\nline two`
    stageRun(runDir, {
      argv: ['claude', '-p', prompt],
      env: { HARNESS_SESSION_ID: 'sess1' },
      script: '#!/bin/bash\n',
    })
    expect(readFileSync(join(runDir, 'argv'), 'utf8')).toBe(`claude\0-p\0${prompt}\0`)
    expect(readFileSync(join(runDir, 'env'), 'utf8')).toBe('HARNESS_SESSION_ID=sess1\0')
    for (const file of ['argv', 'env', 'job.sh', 'log', 'job.err'])
      expect(mode(join(runDir, file))).toBe(0o600)
    expect(mode(join(spool.userDir, 'sess1'))).toBe(0o700)
    expect(mode(runDir)).toBe(0o700)
    removeSessionSpool(spool, 'sess1')
    expect(() => statSync(join(spool.userDir, 'sess1'))).toThrow()
  })

  test('an argument with a NUL, or an invalid variable name, is refused before anything is written', () => {
    const runDir = makeRunDir(openSpool(tmpDir(), null), 'sess2', 1)
    expect(() => stageRun(runDir, { argv: ['a\0b'], env: {}, script: '' })).toThrow(/NUL/)
    expect(() => stageRun(runDir, { argv: ['a'], env: { 'A B': 'x' }, script: '' })).toThrow(
      /invalid variable/,
    )
    expect(() => stageRun(runDir, { argv: [], env: {}, script: '' })).toThrow(/no agent command/)
  })

  test('a session folder an agent swapped for a link is removed as a link, its target left alone', () => {
    const spool = openSpool(tmpDir(), null)
    const target = tmpDir()
    writeFileSync(join(target, 'precious'), 'keep')
    symlinkSync(target, join(spool.userDir, 'sess3'))
    removeSessionSpool(spool, 'sess3')
    expect(readFileSync(join(target, 'precious'), 'utf8')).toBe('keep')
  })
})

describe("a run's report, written by the job (input, never trusted)", () => {
  test('what a finished job wrote', () => {
    const runDir = makeRunDir(openSpool(tmpDir(), null), 'sess4', 1)
    writeFileSync(join(runDir, 'node'), 'hs1-n2\n')
    writeFileSync(join(runDir, 'started'), '2026-12-03T11:00:00Z\n')
    writeFileSync(join(runDir, 'exit-code'), '7\n')
    writeFileSync(join(runDir, 'ended-by'), 'exit\n')
    writeFileSync(join(runDir, 'sent'), `commits=sent\nuncommitted=${'a'.repeat(40)}\nagent_files=sent\n`)
    expect(readRunReport(runDir)).toEqual({
      node: 'hs1-n2',
      started: '2026-12-03T11:00:00Z',
      exitCode: 7,
      endedBy: 'exit',
      setupError: null,
      sent: { commits: 'sent', uncommitted: 'a'.repeat(40), agentFiles: true },
    })
  })

  test('nothing yet: every part null', () => {
    const runDir = makeRunDir(openSpool(tmpDir(), null), 'sess5', 1)
    expect(readRunReport(runDir)).toEqual({
      node: null,
      started: null,
      exitCode: null,
      endedBy: null,
      setupError: null,
      sent: null,
    })
  })

  test('forged values are dropped, not believed', () => {
    const runDir = makeRunDir(openSpool(tmpDir(), null), 'sess6', 1)
    writeFileSync(join(runDir, 'exit-code'), '-1; rm -rf ~\n')
    writeFileSync(join(runDir, 'ended-by'), 'whatever\n')
    writeFileSync(join(runDir, 'started'), '$(date)\n')
    writeFileSync(join(runDir, 'sent'), 'commits=maybe\nuncommitted=HEAD\n')
    expect(readRunReport(runDir)).toMatchObject({
      exitCode: null,
      endedBy: null,
      started: null,
      sent: { commits: 'failed', uncommitted: null, agentFiles: false },
    })
    writeFileSync(join(runDir, 'exit-code'), '256\n')
    expect(readRunReport(runDir).exitCode).toBe(null)
  })

  test('a FIFO or a link in place of a result is refused at once (never blocks, never followed)', {
    tags: ['process'],
  }, () => {
    const runDir = makeRunDir(openSpool(tmpDir(), null), 'sess7', 1)
    execFileSync('mkfifo', [join(runDir, 'exit-code')])
    expect(() => readRunReport(runDir)).toThrow(expect.objectContaining({ code: 'UNSAFE_FILE' }))
    const other = makeRunDir(openSpool(tmpDir(), null), 'sess8', 1)
    symlinkSync('/etc/hostname', join(other, 'node'))
    expect(() => readRunReport(other)).toThrow(expect.objectContaining({ code: 'SYMLINK_REFUSED' }))
  })
})
