import { execFileSync, spawnSync } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { HARNESS_BIN } from '../helpers/cli.js'
import { foreignRecord, hostileClone, hostileTarball } from '../helpers/hostile.js'

/**
 * SPEC §10, "One door to the disk" (docs/security.md): projects cloned from a repository, or unpacked from a
 * tarball, whose `.harness/` carries links, FIFOs, devices and hostile records. Nothing outside harness's own
 * files is written, read or removed; every command answers (none hangs) and says why, with §8's exit codes.
 */
type Json = Record<string, unknown>
const errorOf = (stderr: string) => (JSON.parse(stderr) as { error: { code: string; message: string } }).error

/** What `outside/` holds, name → content: compared before and after to prove nothing there changed. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const name of readdirSync(dir)) out[name] = readFileSync(join(dir, name), 'utf8')
  return out
}

describe('links under .harness/ are never followed', () => {
  test('a dangling .harness/.gitignore link: run refuses (exit 4) and creates nothing where it points', async () => {
    const h = hostileClone((outside) => [
      { kind: 'link', path: '.harness/.gitignore', target: join(outside, 'created-by-harness') },
    ])
    const run = await h.run(['--json', 'run', '-a', 'claude', 'a task'])
    expect(run.exitCode, run.stderr).toBe(4)
    expect(errorOf(run.stderr).code).toBe('SYMLINK_REFUSED')
    expect(errorOf(run.stderr).message).toContain('.gitignore')
    expect(existsSync(join(h.outside, 'created-by-harness'))).toBe(false)
    expect(h.agents.starts()).toEqual([])
  })

  test('planted auto-cleanup.stamp.<pid>.tmp links: run writes its stamp and never through them', async () => {
    // The names an older harness wrote its stamp through: one for each pid the next run may get.
    const next = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'))
    const h = hostileClone((outside) =>
      Array.from({ length: 4000 }, (_, i) => ({
        kind: 'link' as const,
        path: `.harness/auto-cleanup.stamp.${next + 1 + i}.tmp`,
        target: join(outside, 'user-file'),
      })).concat([]),
    )
    execFileSync('sh', ['-c', `printf 'the user file\\n' > "${join(h.outside, 'user-file')}"`])
    const run = await h.run(['run', '-a', 'claude', 'a task'], {
      process: true,
      env: { HARNESS_AUTO_CLEANUP: '1' },
    })
    expect(run.exitCode, run.stderr).toBe(0)
    expect(readFileSync(join(h.outside, 'user-file'), 'utf8')).toBe('the user file\n')
    const stamp = JSON.parse(readFileSync(join(h.dir, '.harness', 'auto-cleanup.stamp'), 'utf8')) as Json
    expect(typeof stamp.at).toBe('string')
  })

  test('a record linked to /dev/zero: list answers at once (the link is refused, not read)', async () => {
    const h = hostileClone(() => [
      { kind: 'link', path: '.harness/sessions/zero0001.json', target: '/dev/zero' },
      { kind: 'file', path: '.harness/sessions/good0001.json', content: foreignRecord('good0001') },
    ])
    const list = await h.run(['session', 'list', '--json'], { process: true, timeoutMs: 60_000 })
    expect(list.signal).toBeNull()
    expect(list.exitCode, list.stderr).toBe(0)
    expect((JSON.parse(list.stdout) as Json[]).map((r) => r.id)).toEqual(['good0001'])
    expect(list.stderr).toContain('zero0001.json')
    expect(list.stderr).toContain('a symlink')
  })

  test('a parse error never quotes the file: a record linked to a credentials file, and one holding it', async () => {
    const secret = '[default]\naws_secret_access_key = AKIAVERYSECRETKEY\n'
    const h = hostileClone((outside) => [
      { kind: 'link', path: '.harness/sessions/cred0001.json', target: join(outside, 'credentials') },
      { kind: 'file', path: '.harness/sessions/copy0001.json', content: secret },
    ])
    writeFileSync(join(h.outside, 'credentials'), secret)
    const before = snapshot(h.outside)
    const list = await h.run(['session', 'list'])
    expect(list.exitCode, list.stderr).toBe(0)
    const show = await h.run(['session', 'show', 'copy0001'])
    expect(show.exitCode).toBe(1)
    for (const out of [list.stderr, show.stderr]) {
      expect(out).not.toMatch(/aws_secret|AKIA|default/)
    }
    expect(show.stderr).toContain('not valid JSON')
    expect(list.stderr).toContain('cred0001.json')
    expect(snapshot(h.outside)).toEqual(before)
  })
})

describe('FIFOs under .harness/ never block a command', () => {
  test('a FIFO record, log and stamp: list, stats, doctor, completion, logs and run all answer', async () => {
    const h = hostileTarball(() => [
      { kind: 'fifo', path: '.harness/sessions/fifo0001.json' },
      { kind: 'file', path: '.harness/sessions/good0001.json', content: foreignRecord('good0001') },
      { kind: 'fifo', path: '.harness/logs/good0001.log' },
      { kind: 'fifo', path: '.harness/auto-cleanup.stamp' },
    ])
    // Each as a process of its own, so that a hang is a killed process (signal set), not a stuck test worker.
    const answer = (args: string[], env?: NodeJS.ProcessEnv) =>
      h.run(args, { process: true, timeoutMs: 60_000, env })
    const list = await answer(['session', 'list', '--json'])
    expect(list.signal).toBeNull()
    expect(list.exitCode, list.stderr).toBe(0)
    expect((JSON.parse(list.stdout) as Json[]).map((r) => r.id)).toEqual(['good0001'])
    expect(list.stderr).toContain('a FIFO')

    const stats = await answer(['session', 'stats', '--json'])
    expect(stats.signal).toBeNull()
    expect(stats.exitCode, stats.stderr).toBe(0)

    const doctor = await answer(['doctor', '--json'])
    expect(doctor.signal).toBeNull()
    expect([0, 1]).toContain(doctor.exitCode)

    const complete = await answer(['__complete', 'bash', '--', 'session', 'show', ''])
    expect(complete.signal).toBeNull()
    expect(complete.exitCode).toBe(0)
    expect(complete.stdout).toContain('good0001')

    const logs = await answer(['--json', 'session', 'logs', 'good0001'])
    expect(logs.signal).toBeNull()
    expect(logs.exitCode).toBe(4)
    expect(errorOf(logs.stderr).message).toContain('not a plain file')

    const run = await answer(['run', '-a', 'claude', 'a task'], { HARNESS_AUTO_CLEANUP: '1' })
    expect(run.signal).toBeNull()
    expect(run.exitCode, run.stderr).toBe(0)
  })
})

describe('bounded reads', () => {
  test('a record nested 200,000 levels deep: show and adopt say so, no stack overflow', async () => {
    // A whole record, with one field nested 200,000 levels deep (every check that walks it recursively overflows).
    const deep = foreignRecord('deep0001').replace(
      /\}\n$/,
      `, "x": ${'['.repeat(200_000)}${']'.repeat(200_000)}}\n`,
    )
    const h = hostileClone(() => [{ kind: 'file', path: '.harness/sessions/deep0001.json', content: deep }])
    for (const args of [
      ['--json', 'session', 'show', 'deep0001'],
      ['--json', 'session', 'adopt', 'deep0001', '--yes'],
    ]) {
      const result = await h.run(args)
      expect(result.stderr).not.toContain('Maximum call stack')
      expect(result.exitCode, result.stderr).not.toBe(0)
      const error = errorOf(result.stderr)
      expect(['CORRUPT_RECORD', 'SESSION_NOT_FOUND']).toContain(error.code)
      if (error.code === 'CORRUPT_RECORD') expect(error.message).toContain('nested deeper than')
    }
    const show = await h.run(['--json', 'session', 'show', 'deep0001'])
    expect(errorOf(show.stderr).code).toBe('CORRUPT_RECORD')
  })

  test('a 300 MB single-line log: export and logs stay in bounded memory', async () => {
    const h = hostileTarball(() => [
      { kind: 'file', path: '.harness/sessions/long0001.json', content: foreignRecord('long0001') },
      { kind: 'file', path: '.harness/logs/long0001.log', content: 'start\n' },
    ])
    const log = join(h.dir, '.harness', 'logs', 'long0001.log')
    const fd = openSync(log, 'a')
    const piece = Buffer.alloc(16 * 1024 * 1024, 'x')
    for (let written = 0; written < 300 * 1024 * 1024; written += piece.length) writeSync(fd, piece)
    writeSync(fd, '\nend\n')
    closeSync(fd)
    const adopt = await h.run(['session', 'adopt', 'long0001', '--yes'])
    expect(adopt.exitCode, adopt.stderr).toBe(0)
    // GNU time's %M: the peak RSS of the process, in KiB.
    const measured = spawnSync(
      '/usr/bin/time',
      ['-f', '%M', HARNESS_BIN, 'session', 'export', 'long0001', '--json'],
      {
        cwd: h.dir,
        env: h.agents.env,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        timeout: 300_000,
      },
    )
    expect(measured.status, measured.stderr).toBe(0)
    const peakMiB = Number(measured.stderr.trim().split('\n').at(-1)) / 1024
    // The line is held to its first MiB, whatever its length (docs/history.md, "Readable logs"): under the
    // 150 MB of "Bounded memory". Reading it whole peaked at 533 MiB (node), and holding 16 MiB pieces at 424
    // (native).
    expect(peakMiB).toBeLessThan(150)
    const exported = JSON.parse(measured.stdout) as { log: { lines: string[] } }
    expect(exported.log.lines.at(-1)).toBe('end')
    expect(exported.log.lines.at(-2)).toMatch(/^· … \d+ more bytes of this line/)
    expect(Math.max(...exported.log.lines.map((l) => l.length))).toBeLessThan(10_000)
    // `logs` renders the same log in the same bounded memory, to a reader that takes it all.
    const logs = spawnSync('/usr/bin/time', ['-f', '%M', HARNESS_BIN, 'session', 'logs', 'long0001'], {
      cwd: h.dir,
      env: h.agents.env,
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    })
    expect(logs.status, logs.stderr).toBe(0)
    expect(Number(logs.stderr.trim().split('\n').at(-1)) / 1024).toBeLessThan(150)
  }, 600_000)
})

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is that none is printed
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u200b]/

describe('output', () => {
  const ESC = '\u001b]0;owned title\u0007'
  const project = () =>
    hostileClone(() => [
      {
        kind: 'file',
        path: '.harness/sessions/bidi0001.json',
        content: foreignRecord('bidi0001', { prompt: `invoice\u202Eexe.pdf ${ESC} zero\u200Bwidth` }),
      },
    ])

  test('U+202E, zero-width characters and escapes in a task are shown escaped in tables', async () => {
    const h = project()
    const list = await h.run(['session', 'list'])
    expect(list.exitCode, list.stderr).toBe(0)
    expect(list.stdout).toContain('invoice\\u202e')
    expect(list.stdout).not.toMatch(UNSAFE)
    const show = await h.run(['session', 'show', 'bidi0001'])
    expect(show.stdout).toContain('\\u202e')
    expect(show.stdout).not.toMatch(UNSAFE)
  })

  test('completion escapes what it prints: a foreign task cannot retitle the terminal on Tab', async () => {
    const h = project()
    for (const shell of ['bash', 'zsh', 'fish']) {
      const complete = await h.run(['__complete', shell, '--', 'session', 'show', ''])
      expect(complete.exitCode, complete.stderr).toBe(0)
      expect(complete.stdout).toContain('bidi0001')
      expect(complete.stdout).not.toMatch(UNSAFE)
      if (shell !== 'bash') expect(complete.stdout).toContain('\\x1b')
    }
  })
})
