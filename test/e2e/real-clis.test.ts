import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { resolveProvider } from '../../src/providers/args.js'
import { flagsMissingFromHelp } from '../../src/providers/help.js'
import { PERMISSIONS } from '../../src/providers/schema.js'
import { cli, HARNESS_BIN, json } from '../helpers/cli.js'
import { readRecords } from '../helpers/sessions.js'
import { tmpDir, tmpGitRepo } from '../helpers/tmp.js'
import { shellQuote, TmuxServer, waitFor } from '../helpers/tmux.js'

/**
 * The real agent CLIs, installed from npm into this test's own temporary folder, run through harness at every
 * permission level, start and resume, headless and in a terminal: none may answer with a usage error.
 *
 * Opt-in: installing them takes about a minute on a fast line and running them about two more, which the
 * default suite cannot afford. `HARNESS_REAL_CLIS=1 npx vitest run test/e2e/real-clis.test.ts` runs it;
 * `HARNESS_REAL_CLIS_DIR=<prefix>` reuses an `npm i --prefix <prefix>` made before. Offline (npm cannot
 * install), it is skipped, never failed. No credentials are given: each CLI gets as far as its login check or
 * its first request, which is past its argument parser; one still running after a few seconds is stopped.
 */
const ENABLED = process.env.HARNESS_REAL_CLIS === '1'
const PACKAGES = [
  '@anthropic-ai/claude-code',
  '@openai/codex',
  '@google/gemini-cli',
  'opencode-ai',
  '@mariozechner/pi-coding-agent',
]
const PROVIDERS = ['claude', 'gemini', 'codex', 'opencode', 'pi-agent'] as const

/**
 * What CLIs print when their parser refuses the argv: commander (claude), clap (codex), yargs (gemini) and pi's own
 * parser. opencode's parser ignores unknown flags, so for it the help check below is the evidence.
 */
const USAGE_ERROR = [/unknown option/i, /unexpected argument/i, /unknown argument/i, /Usage:/]
/** How long a CLI that got past its parser is watched before it is stopped. */
const OBSERVE = '6s'

function usageErrors(text: string): string[] {
  return text.split('\n').filter((line) => USAGE_ERROR.some((pattern) => pattern.test(line)))
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeout: number) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(command, args, { env, timeout, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
      resolve({ code, output: `${stdout}${stderr}` })
    })
  })
}

/** The folder holding the CLIs' binaries, or a reason they are not available. */
async function installClis(): Promise<{ bin?: string; reason?: string }> {
  const reuse = process.env.HARNESS_REAL_CLIS_DIR
  const prefix = reuse || tmpDir('harness-real-clis-')
  const bin = join(prefix, 'node_modules', '.bin')
  if (reuse && existsSync(join(bin, 'pi'))) return { bin }
  const npm = await run(
    'npm',
    ['i', '--prefix', prefix, '--no-audit', '--no-fund', ...PACKAGES],
    process.env,
    480_000,
  )
  if (npm.code !== 0) return { reason: `npm could not install the CLIs:\n${npm.output.slice(-2000)}` }
  return { bin }
}

interface Outcome {
  provider: string
  level: string
  mode: 'headless' | 'interactive'
  kind: 'start' | 'resume'
  result: string
}

describe.skipIf(!ENABLED)(
  'real agent CLIs accept every argv harness gives them (HARNESS_REAL_CLIS=1)',
  () => {
    let bin: string | undefined
    const outcomes: Outcome[] = []
    // Made in beforeAll: a describe body runs even when the block is skipped, and its afterAll then does not.
    let tmux: TmuxServer

    beforeAll(async () => {
      tmux = new TmuxServer(tmpDir())
      const installed = await installClis()
      if (installed.reason) console.warn(`skipping the real CLIs: ${installed.reason}`)
      bin = installed.bin
    }, 600_000)

    afterAll(() => {
      tmux?.stop()
      const lines = outcomes.map(
        (o) =>
          `${o.provider.padEnd(9)} ${o.level.padEnd(10)} ${o.mode.padEnd(11)} ${o.kind.padEnd(6)} ${o.result}`,
      )
      if (lines.length) console.log(`real CLIs through harness:\n${lines.join('\n')}`)
    })

    for (const name of PROVIDERS) {
      test.concurrent(`${name}: every level, start and resume, headless and in a terminal`, async (ctx) => {
        if (!bin) return ctx.skip()
        const repo = tmpGitRepo()
        // As root, claude runs autonomous only in a sandbox it is told about (harness refuses it otherwise).
        const env = { ...repo.env, PATH: `${bin}${delimiter}${repo.env.PATH ?? ''}`, IS_SANDBOX: '1' }
        const harness = (args: string[]) => cli(args, { cwd: repo.dir, env, timeoutMs: 120_000 })
        const provider = resolveProvider(name)

        // The flags harness passes are all in the installed CLI's help (what `doctor` checks).
        const helps = await Promise.all(
          provider.help_args.map((args) =>
            run(join(bin as string, provider.command as string), args, env, 60_000),
          ),
        )
        expect(flagsMissingFromHelp(provider, helps.map((h) => h.output).join('\n'))).toEqual([])

        /** Waits until the run ends by itself or has been running for OBSERVE; then it is stopped. */
        const settle = async (id: string): Promise<string> => {
          const wait = await harness(['session', 'wait', id, '--timeout', OBSERVE])
          if (wait.exitCode !== 124) return `exited ${wait.exitCode}`
          const kill = await harness(['session', 'kill', id])
          return `still running after ${OBSERVE}, stopped (kill exit ${kill.exitCode})`
        }
        const note = (level: string, mode: Outcome['mode'], kind: Outcome['kind'], result: string) =>
          outcomes.push({ provider: name, level, mode, kind, result })

        for (const level of PERMISSIONS) {
          // Headless (no terminal): detached, its output in the session's log.
          const started = await harness(['run', '-a', name, '-P', level, '--detach', '--json', 'say hi'])
          expect(started.exitCode, started.stderr).toBe(0)
          const { id } = json<{ id: string }>(started)
          note(level, 'headless', 'start', await settle(id))
          const resumed = await harness(['session', 'resume', id, '--detach', '--json'])
          expect(resumed.exitCode, resumed.stderr).toBe(0)
          note(level, 'headless', 'resume', await settle(id))
          const log = readFileSync(join(repo.dir, '.harness', 'logs', `${id}.log`), 'utf8')
          expect(usageErrors(log), `${name} ${level} headless:\n${log.slice(0, 3000)}`).toEqual([])

          // In a terminal: a tmux pane, start then resume; the pane's history is what the user would have seen.
          const sid = `t-${level}`
          const window = `${name}-${level}`
          const done = join(repo.home, `${window}.done`)
          const H = shellQuote(HARNESS_BIN)
          await tmux.start(
            window,
            `cd ${shellQuote(repo.dir)}
${H} run -a ${name} -P ${level} --session-id ${sid} "say hi"; echo "[harness exit $?]"
${H} session resume ${sid}; echo "[harness exit $?]"
touch ${shellQuote(done)}; sleep 600`,
            env,
          )
          for (const kind of ['start', 'resume'] as const) {
            const n = kind === 'start' ? 1 : 2
            await waitFor(
              `${name} ${level} ${kind} in a terminal`,
              () => {
                const record = readRecords<{ id: string; runs?: { pid?: number | null }[]; status: string }>(
                  repo.dir,
                ).find((r) => r.id === sid)
                const runs = record?.runs ?? []
                return runs.length >= n && (runs[n - 1]?.pid || record?.status !== 'RUNNING')
              },
              60_000,
            )
            note(level, 'interactive', kind, await settle(sid))
          }
          await waitFor(`${name} ${level} terminal script`, () => existsSync(done), 60_000)
          const pane = tmux.tmux('capture-pane', '-p', '-S', '-', '-t', window)
          tmux.killSession(window)
          expect(usageErrors(pane), `${name} ${level} in a terminal:\n${pane}`).toEqual([])
        }
      }, 900_000)
    }
  },
)
