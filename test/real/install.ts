import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The real agent CLIs, pinned: the versions docs/providers.md's table was measured with. They install from npm
 * once into `node_modules/.cache/harness-real-clis/<key>/` (a fresh clone installs them once per CI run; every
 * file of the suite shares the one install).
 */
export const CLI_PACKAGES = {
  claude: '@anthropic-ai/claude-code@2.1.332',
  codex: '@openai/codex@0.171.0',
  gemini: '@google/gemini-cli@0.61.0',
  opencode: 'opencode-ai@1.18.33',
  pi: '@mariozechner/pi-coding-agent@0.73.1',
} as const

const ROOT = fileURLToPath(new URL('../../node_modules/.cache/harness-real-clis/', import.meta.url))
const KEY = `v1-${Object.values(CLI_PACKAGES)
  .map((p) => p.replace(/[@/]/g, '_'))
  .join('-')}`.slice(0, 200)

let pending: Promise<{ bin?: string; reason?: string }> | undefined

/** The folder of the CLIs' binaries, or the reason npm could not install them (the suite then skips). */
export function installClis(): Promise<{ bin?: string; reason?: string }> {
  pending ??= install()
  return pending
}

/** The folder the CLIs are installed in (`node_modules/.bin` below it). */
export function realClisPrefix(): string {
  return process.env.HARNESS_REAL_CLIS_DIR || join(ROOT, KEY)
}

async function install(): Promise<{ bin?: string; reason?: string }> {
  const prefix = realClisPrefix()
  const bin = join(prefix, 'node_modules', '.bin')
  if ((await brokenClis(bin)).length === 0) return { bin }
  mkdirSync(prefix, { recursive: true })
  // Each test worker is a process of its own: two `npm install` into one prefix at once break each other
  // (ENOTEMPTY as one removes what the other unpacks). One installs; the others wait for it, then look again.
  const release = await installLock(`${prefix}.lock`)
  try {
    if ((await brokenClis(bin)).length === 0) return { bin }
    return await npmInstall(prefix, bin)
  } finally {
    release()
  }
}

/** A folder made with mkdir (atomic) holding the installer's pid; a dead installer's lock is taken over. */
async function installLock(path: string): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(path)
      writeFileSync(join(path, 'pid'), String(process.pid))
      return () => rmSync(path, { recursive: true, force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    let holder = Number.NaN
    try {
      holder = Number(readFileSync(join(path, 'pid'), 'utf8'))
    } catch {}
    if (Number.isInteger(holder) && holder > 0 && !processLives(holder)) {
      rmSync(path, { recursive: true, force: true })
      continue
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function npmInstall(prefix: string, bin: string): Promise<{ bin?: string; reason?: string }> {
  const npmFailure = await new Promise<string | undefined>((resolve) => {
    execFile(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '-E', ...Object.values(CLI_PACKAGES)],
      { timeout: 480_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve(error ? `${stdout}${stderr}`.trim().split('\n').at(-1) || error.message : undefined),
    )
  })
  // npm's exit status is not the test: opencode-ai's own postinstall fails where it finds no package for the
  // platform's libc, after the binaries it needs are in place. Each CLI answering `--version` is.
  const broken = await brokenClis(bin)
  if (broken.length === 0) return { bin }
  return {
    reason: `npm could not install ${broken.join(', ')}${npmFailure ? ` (npm: ${npmFailure})` : ''}`,
  }
}

/** The CLIs whose binary is missing or does not answer `--version` (gemini's takes 2 s; a loaded CI, more). */
async function brokenClis(bin: string): Promise<string[]> {
  const broken: string[] = []
  for (const name of Object.keys(CLI_PACKAGES)) {
    const path = join(bin, name)
    const works =
      existsSync(path) &&
      (await new Promise<boolean>((resolve) =>
        execFile(path, ['--version'], { timeout: 60_000 }, (error) => resolve(!error)),
      ))
    if (!works) broken.push(name)
  }
  return broken
}
