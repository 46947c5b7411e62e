import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'
import { isolatedEnv, tmpDir } from '../helpers/tmp.js'

/**
 * The README's first screen, run as written (issue 37): its set-up lines that put `harness` on PATH and define
 * `hcd`, then the tour of a session's whole life, in a fresh bash and a fresh zsh. The commands are read out of
 * README.md, not copied here, so the README cannot drift from what works.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/** The lines of the first ```sh block under the heading `## <title>`. */
function shBlock(title: string): string[] {
  const section = README.slice(README.indexOf(`\n## ${title}\n`))
  expect(section.length, `README section "${title}"`).toBeLessThan(README.length)
  const match = /```sh\n([\s\S]*?)```/.exec(section)
  if (!match?.[1]) throw new Error(`no sh block under "${title}"`)
  return match[1].trimEnd().split('\n')
}

const installed = (shell: string) => spawnSync(shell, ['-c', 'true']).status === 0

/** PATH without any folder that already holds a `harness`: the README's own line must put it there. */
function pathWithoutHarness(path: string): string {
  return path
    .split(delimiter)
    .filter((dir) => dir && !existsSync(join(dir, 'harness')))
    .join(delimiter)
}

describe("the README's first screen, as written", () => {
  const setUp = shBlock('Set up')
  const tour = shBlock("A session's whole life, in a minute")

  test('it shows the shell-init line, two ways onto PATH, and no file the repository lacks', () => {
    const screen = README.slice(0, README.indexOf('\n## Quick tour'))
    expect(setUp.some((line) => line.startsWith('npm link'))).toBe(true)
    expect(setUp.some((line) => line.startsWith('export PATH="$PWD/bin:$PATH"'))).toBe(true)
    expect(setUp).toContain(
      'eval "$(harness shell-init bash)"    # bash: hcd <id>, a cd into a session\'s worktree (for good: in ~/.bashrc)',
    )
    // A session's whole life with the exec agent: run, list, show, diff, merge, cleanup.
    for (const step of [
      'harness run -a exec',
      'session list',
      'session show',
      'session diff',
      'session merge',
      'session cleanup',
      'hcd ',
    ]) {
      expect(tour.join('\n'), step).toContain(step)
    }
    expect(README).not.toMatch(/\bSPEC\b/)
    // Every file the first screen links to is in the repository.
    for (const [, link] of screen.matchAll(/\]\(([^)#]+)\)/g))
      expect(existsSync(join(ROOT, link as string)), link).toBe(true)
  })

  for (const [shell, flags] of [
    ['bash', ['--norc', '--noprofile', '-e', '-c']],
    ['zsh', ['-f', '-e', '-c']],
  ] as const) {
    test.skipIf(!installed(shell))(`${shell}: the set-up lines, then the tour, in a fresh shell`, () => {
      const home = tmpDir()
      const scratch = join(home, 'tmp')
      mkdirSync(scratch)
      // Building and `npm link` (a global install) are what the suite has done already, or must not do.
      const lines = setUp
        .filter((line) => !line.startsWith('npm '))
        .filter((line) => !line.includes('shell-init') || line.includes(`shell-init ${shell})`))
      const script = [...lines, ...tour].join('\n')
      const env = isolatedEnv(home, { TMPDIR: scratch, SHELL: `/bin/${shell}` })
      env.PATH = pathWithoutHarness(env.PATH ?? '')
      delete env.HARNESS_RUNTIME
      const run = spawnSync(shell, [...flags, script], { cwd: ROOT, env, encoding: 'utf8', timeout: 120_000 })
      const output = `${run.stdout}\n${run.stderr}`
      expect(run.status, output).toBe(0)
      // What each step shows: the session, its file marked new, the diff, hcd's cat, the merged file, the cleanup.
      expect(run.stdout).toMatch(/^ID +NAME +AGENT +STATUS/m)
      expect(run.stdout).toMatch(/^[0-9a-f]{8} +hello +exec +COMPLETED/m)
      expect(run.stdout).toContain('  + hello.txt')
      expect(run.stdout).toMatch(/hello\.txt \| 1 \+/)
      // Once in its worktree (hcd's cat), once in the scratch repository after the merge.
      expect(
        run.stdout.split('\n').filter((line) => line === 'hello from an agent'),
        output,
      ).toHaveLength(2)
      expect(run.stdout).toMatch(/removed 1 session/i)
    })
  }

  test.skipIf(!installed('bash'))(
    "the CI block's `harness trust` step passes in a project without a config",
    () => {
      const [line] = shBlock('In scripts and CI').filter((l) => l.startsWith('harness trust'))
      expect(line).toBeDefined()
      const home = tmpDir()
      const project = join(home, 'project')
      mkdirSync(project)
      const env = isolatedEnv(home, { PATH: `${join(ROOT, 'bin')}${delimiter}${process.env.PATH ?? ''}` })
      const run = spawnSync('bash', ['--norc', '--noprofile', '-e', '-c', line as string], {
        cwd: project,
        env,
        encoding: 'utf8',
      })
      expect(run.status, run.stderr).toBe(0)
      expect(run.stdout).toContain('nothing to trust yet')
    },
  )
})
