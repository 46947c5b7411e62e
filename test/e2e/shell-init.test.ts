import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { delimiter, dirname } from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { HARNESS_BIN, HARNESS_LAUNCHER } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

const installed = (shell: string) => spawnSync(shell, ['-c', 'true']).status === 0
const missing = ['bash', 'zsh', 'fish'].filter((shell) => !installed(shell))
if (missing.length) console.warn(`shell-init tests skipped for ${missing.join(', ')}: not installed`)

let repo: TmpRepo
let id: string
let gone: string
let env: NodeJS.ProcessEnv

/** Runs a script in `shell` from the repo with `harness` on PATH: its status, stdout and stderr. */
function run(shell: string, args: string[]) {
  const result = spawnSync(shell, args, { cwd: repo.dir, env, encoding: 'utf8', timeout: 60_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

beforeAll(async () => {
  repo = tmpGitRepo()
  const session = await finishedSession(repo, 'true', ['--prompt', 'tidy the docs'])
  id = session.id
  const other = await finishedSession(repo, 'true', ['--prompt', 'gone'])
  gone = other.id
  rmSync(other.worktree_dir, { recursive: true, force: true })
  env = { ...repo.env, PATH: `${dirname(HARNESS_LAUNCHER)}${delimiter}${repo.env.PATH ?? ''}` }
})

// bash and zsh read the same function; zsh runs it without its startup files.
const POSIX = [
  ['bash', ['-c']],
  ['zsh', ['-f', '-c']],
] as const

describe('harness shell-init: hcd <id>', () => {
  for (const [shell, flags] of POSIX) {
    test.skipIf(!installed(shell))(`${shell}: hcd by prefix goes into the worktree`, () => {
      const out = run(shell, [
        ...flags,
        `eval "$(harness shell-init ${shell})"; hcd ${id.slice(0, 4)}; echo "status=$? $PWD"`,
      ])
      expect(out.stdout.trim(), out.stderr).toBe(`status=0 ${repo.dir}/.harness/worktrees/${id}`)
    })

    test.skipIf(!installed(shell))(
      `${shell}: on an error it prints harness's error, returns its code and stays`,
      () => {
        const out = run(shell, [
          ...flags,
          `eval "$(harness shell-init ${shell})"
hcd nope1234; echo "status=$? $PWD"
hcd ${gone}; echo "status=$? $PWD"
hcd; echo "status=$? $PWD"`,
        ])
        expect(out.stdout.trim().split('\n')).toEqual([
          `status=3 ${repo.dir}`,
          `status=4 ${repo.dir}`,
          `status=2 ${repo.dir}`,
        ])
        expect(out.stderr).toContain('harness: session "nope1234" not found')
        expect(out.stderr).toContain(`harness: the folder of session "${gone}" no longer exists`)
        expect(out.stderr).toContain('usage: hcd <session-id>')
      },
    )

    test.skipIf(!installed(shell))(`${shell}: under set -e a failing hcd stops the script`, () => {
      const out = run(shell, [
        ...flags,
        `set -e; eval "$(harness shell-init ${shell})"; hcd nope1234; echo "went on in $PWD"`,
      ])
      expect(out.status).toBe(3)
      expect(out.stdout).toBe('')
      // What the README used to show: the script goes on, in the folder it was in.
      const old = run(shell, [...flags, 'set -e; cd "$(harness session path nope1234)"; echo "went on"'])
      expect(old.stdout).toBe('went on\n')
    })
  }

  test.skipIf(!installed('bash'))('bash: Tab completes session ids for hcd', () => {
    const out = run('bash', [
      '-c',
      `eval "$(harness shell-init bash)"; complete -p hcd
COMP_WORDS=(hcd ${id.slice(0, 3)}); COMP_CWORD=1; _hcd_complete; echo "[\${COMPREPLY[*]}]"`,
    ])
    expect(out.stdout.split('\n')).toEqual(['complete -F _hcd_complete hcd', `[${id}]`, ''])
  })

  test.skipIf(!installed('zsh'))('zsh: Tab completes session ids with status and task', () => {
    // _describe and compdef come from compinit; stand-ins print what the script hands them.
    const out = run('zsh', [
      '-f',
      '-c',
      `compdef() { print -r -- "compdef $*" }; _describe() { print -rl -- "\${(@P)\${@[-1]}}" }
eval "$(harness shell-init zsh)"
words=(hcd ${id.slice(0, 4)}); CURRENT=2; _hcd`,
    ])
    expect(out.stdout.split('\n')).toEqual(['compdef _hcd hcd', `${id}:COMPLETED tidy the docs`, ''])
  })

  test.skipIf(!installed('fish'))('fish: hcd goes in, fails and stays, and completes ids', () => {
    const out = run('fish', [
      '--no-config',
      '-c',
      `harness shell-init fish | source
hcd ${id.slice(0, 4)}; echo "status=$status $PWD"; cd ${repo.dir}
hcd nope1234; echo "status=$status $PWD"
hcd ${gone}; echo "status=$status $PWD"
complete -C "hcd ${id.slice(0, 4)}"`,
    ])
    expect(out.stdout.split('\n')).toEqual([
      `status=0 ${repo.dir}/.harness/worktrees/${id}`,
      `status=3 ${repo.dir}`,
      `status=4 ${repo.dir}`,
      `${id}\tCOMPLETED tidy the docs`,
      '',
    ])
    expect(out.stderr).toContain('harness: session "nope1234" not found')
  })

  test('an unknown shell is a usage error', () => {
    const out = spawnSync(HARNESS_BIN, ['shell-init', 'tcsh'], { cwd: repo.dir, env, encoding: 'utf8' })
    expect(out.status).toBe(2)
    expect(out.stdout).toBe('')
  })
})
