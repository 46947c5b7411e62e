import { execFileSync, spawnSync } from 'node:child_process'
import { delimiter, dirname } from 'node:path'
import { beforeAll, describe, expect, test } from 'vitest'
import { HARNESS_LAUNCHER } from '../helpers/cli.js'
import { finishedSession } from '../helpers/finished-session.js'
import { type TmpRepo, tmpGitRepo } from '../helpers/tmp.js'

const installed = (shell: string) => spawnSync(shell, ['-c', 'true']).status === 0

let repo: TmpRepo
let id: string
let env: NodeJS.ProcessEnv

/** Runs a shell script in the repo with `harness` on PATH; stdout. */
function shell(name: string, args: string[]): string {
  return execFileSync(name, args, { cwd: repo.dir, env, encoding: 'utf8', timeout: 60_000 })
}

beforeAll(async () => {
  repo = tmpGitRepo()
  id = (await finishedSession(repo, 'true', ['--prompt', 'tidy the docs'])).id
  env = { ...repo.env, PATH: `${dirname(HARNESS_LAUNCHER)}${delimiter}${repo.env.PATH ?? ''}` }
})

describe('shell completion', () => {
  test('bash: registered; commands, flags, agents and session ids by prefix', () => {
    const calls = [
      ['harness', 'session', 'k'],
      ['harness', 'session', 'list', '--so'],
      ['harness', 'run', '-a', 'c'],
      ['harness', 'session', 'show', ''],
      ['harness', '--js'],
    ]
    const script = [
      'source <(harness completion bash)',
      'complete -p harness',
      ...calls.map(
        (words) =>
          `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _harness_complete; echo "[\${COMPREPLY[*]}]"`,
      ),
    ].join('\n')
    expect(shell('bash', ['-c', script]).split('\n')).toEqual([
      'complete -F _harness_complete harness',
      '[kill]',
      '[--sort]',
      '[claude codex]',
      `[${id}]`,
      '[--json]',
      '',
    ])
  })

  test.skipIf(!installed('zsh'))('zsh: session ids come with their status and task', () => {
    // _describe and compdef come from compinit; stand-ins print what the script hands them.
    const script = `compdef() {}; _describe() { print -rl -- "\${(@P)\${@[-1]}}" }
source <(harness completion zsh)
words=(harness session show ''); CURRENT=4; _harness
words=(harness session pa); CURRENT=3; _harness`
    const lines = shell('zsh', ['-f', '-c', script]).trim().split('\n')
    expect(lines[0]).toBe(`${id}:COMPLETED tidy the docs`)
    expect(lines.slice(1).map((line) => line.split(':')[0])).toEqual(['path', 'pause'])
  })

  test.skipIf(!installed('fish'))('fish: ids with descriptions, commands by prefix', () => {
    const out = shell('fish', [
      '--no-config',
      '-c',
      'harness completion fish | source; complete -C "harness session show "; complete -C "harness comp"',
    ])
    expect(out).toContain(`${id}\tCOMPLETED tidy the docs\n`)
    expect(out).toContain('completion\tprint the shell completion script')
  })
})
