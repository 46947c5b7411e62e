import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { sessionRecord } from '../fixtures/records.js'
import { HARNESS_BIN, HARNESS_LAUNCHER } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { writeRecord } from '../helpers/sessions.js'
import { type TmpRepo, tmpDir, tmpGitRepo } from '../helpers/tmp.js'

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

/**
 * A cloned project's records naming where `hcd` would go (docs/security.md, "hcd"): an absolute folder outside
 * the project, `-` (the shell's previous folder, even after `--`), and a relative name that CDPATH resolves
 * elsewhere. Each exists, so the old `session path` printed it and hcd went there.
 */
describe('hcd goes only to a verified, absolute folder of the project', () => {
  let clone: TmpRepo
  let outside: string
  let previous: string
  let cdpath: string
  let cloneEnv: NodeJS.ProcessEnv

  beforeAll(() => {
    clone = tmpGitRepo()
    outside = tmpDir()
    previous = tmpDir()
    cdpath = tmpDir()
    mkdirSync(join(clone.dir, '-'))
    mkdirSync(join(clone.dir, 'target'))
    mkdirSync(join(cdpath, 'target'))
    const named = (id: string, worktree_dir: string) =>
      sessionRecord(id, { worktree_dir, is_worktree: false, git_branch: null, base_dir: clone.dir })
    // Shipped with the clone (foreign) ...
    writeRecord(clone.dir, clone.env, named('abs00001', outside), { seal: false })
    writeRecord(clone.dir, clone.env, named('dash0001', '-'), { seal: false })
    writeRecord(clone.dir, clone.env, named('cdpa0001', 'target'), { seal: false })
    // ... and the same paths sealed by this user's key: still not folders harness hands a shell.
    writeRecord(clone.dir, clone.env, named('abs00002', outside))
    writeRecord(clone.dir, clone.env, named('dash0002', '-'))
    writeRecord(clone.dir, clone.env, named('cdpa0002', 'target'))
    cloneEnv = {
      ...clone.env,
      PATH: `${dirname(HARNESS_LAUNCHER)}${delimiter}${clone.env.PATH ?? ''}`,
      CDPATH: cdpath,
      OLDPWD: previous,
    }
  })

  const IDS = ['abs00001', 'dash0001', 'cdpa0001', 'abs00002', 'dash0002', 'cdpa0002']

  function inClone(shell: string, args: string[], env = cloneEnv) {
    const result = spawnSync(shell, args, { cwd: clone.dir, env, encoding: 'utf8', timeout: 60_000 })
    return { status: result.status, stdout: result.stdout, stderr: result.stderr }
  }

  for (const [shell, flags] of POSIX) {
    test.skipIf(!installed(shell))(
      `${shell}: a record's outside, "-" or CDPATH-relative folder: refused, stays`,
      () => {
        const script = IDS.map((one) => `hcd ${one}; echo "status=$? $PWD"`).join('\n')
        const out = inClone(shell, [
          ...flags,
          `cd ${clone.dir}; eval "$(harness shell-init ${shell})"\n${script}`,
        ])
        expect(out.stdout.trim().split('\n'), out.stderr).toEqual(IDS.map(() => `status=4 ${clone.dir}`))
        expect(out.stderr).toContain('session "abs00001" is foreign')
        expect(out.stderr).toContain('session "abs00002" is outside the project')
        expect(out.stderr).toContain('session "dash0002" is not an absolute path')
      },
    )

    test.skipIf(!installed(shell))(
      `${shell}: whatever "harness" prints, hcd cds only to an absolute path`,
      () => {
        // A stand-in `harness` that prints a relative name or "-" with exit 0: the function refuses it itself.
        const stub = tmpDir()
        writeFileSync(join(stub, 'harness'), '#!/bin/sh\nprintf "%s\\n" "$HCD_STUB"\n', { mode: 0o755 })
        for (const printed of ['-', 'target', '']) {
          const env = { ...cloneEnv, PATH: `${stub}${delimiter}${clone.env.PATH ?? ''}`, HCD_STUB: printed }
          const init = spawnSync(HARNESS_BIN, ['shell-init', shell], {
            cwd: clone.dir,
            env,
            encoding: 'utf8',
          })
          const out = inClone(
            shell,
            [...flags, `cd ${clone.dir}; ${init.stdout}\nhcd abcd; echo "status=$? $PWD"`],
            env,
          )
          expect(out.stdout.trim(), `${printed}: ${out.stderr}`).toBe(`status=1 ${clone.dir}`)
          expect(out.stderr).toContain('not an absolute path for session "abcd"')
        }
      },
    )
  }

  test.skipIf(!installed('fish'))(
    'fish: the same records are refused, and a relative name from "harness" too',
    () => {
      const script = IDS.map((one) => `hcd ${one}; echo "status=$status $PWD"`).join('\n')
      const out = inClone('fish', [
        '--no-config',
        '-c',
        `cd ${clone.dir}; harness shell-init fish | source\n${script}`,
      ])
      expect(out.stdout.trim().split('\n'), out.stderr).toEqual(IDS.map(() => `status=4 ${clone.dir}`))
      const stub = tmpDir()
      writeFileSync(join(stub, 'harness'), '#!/bin/sh\nprintf "%s\\n" "$HCD_STUB"\n', { mode: 0o755 })
      const init = spawnSync(HARNESS_BIN, ['shell-init', 'fish'], {
        cwd: clone.dir,
        env: cloneEnv,
        encoding: 'utf8',
      })
      for (const printed of ['-', 'target']) {
        const env = { ...cloneEnv, PATH: `${stub}${delimiter}${clone.env.PATH ?? ''}`, HCD_STUB: printed }
        const stubbed = inClone(
          'fish',
          ['--no-config', '-c', `cd ${clone.dir}; ${init.stdout}\nhcd abcd; echo "status=$status $PWD"`],
          env,
        )
        expect(stubbed.stdout.trim(), `${printed}: ${stubbed.stderr}`).toBe(`status=1 ${clone.dir}`)
      }
    },
  )
})
